"""Commands built as vertical slices: one folder per top-level command (``commands/<name>/``, the name with
underscores), holding its command line (``cli``, registered on the app when the command registry
:mod:`~counterfair.command_registry` has it imported) and, where it has them, its options and verb (``core``), its
result and report page (``result``, ``page``) and its run-directory shell (``shell``)."""
