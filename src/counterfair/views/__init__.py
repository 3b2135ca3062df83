"""What a person reads: console tables (:mod:`.console`), the HTML and Markdown reports (:mod:`.report`), MLflow
(:mod:`.tracking`). Views read typed summaries (:mod:`counterfair.summaries`), never a summary's string keys.
"""
