"""Parallel sampling for llama.cpp: many sequences decoded together in one batch, prompts evaluated once.

llama-cpp-python's high-level ``Llama.create_completion`` decodes one sequence at a time, so the 16 samples of
paper 000's rewrite run one after another and each generated token is a batch of one (the CPU mostly waits on
memory). This module drives llama.cpp's own batch API through llama-cpp-python's low-level bindings:

* a context of its own with ``parallel`` sequence slots and a unified KV cache, so copies of a prompt share cells;
* each prompt is evaluated once (all but its last token) into a *holder* sequence, starting from the longest prefix
  it shares with a prompt already held (the few-shot prefix is evaluated once per process, as in the sequential
  path); a sample starts by copying its holder (cells are shared, not duplicated) and decoding the prompt's last
  token in its own slot;
* every step decodes one token of every running sample in a single ``llama_decode``; a sample that ends (end of
  generation token, a stop string, or ``max_tokens``) frees its slot at once and the next waiting sample, of the
  same input or the next one, starts there (continuous batching);
* sample ``i`` of an input has its own sampler chain (top-k, temperature, then a distribution seeded with
  ``seed + i``).

Reproducibility: the logits of a sequence depend in their last bits on what else is in its batch and where its KV
cells lie (llama.cpp's CPU kernels sum in another order for other batch sizes and cache layouts). So every call starts
from the state a fresh evaluation of its first prompt would reach: the cache is emptied except for the whole
``PROMPT_BLOCK``-position blocks that this prompt shares with the previous call's first prompt, which sit at the
start of the cache and are evaluated block by block, exactly as a fresh run evaluates them. The few-shot prefix is
thus evaluated once per process, and the same inputs in one call, with the same seed and ``parallel``, give the same
samples whatever ran before. A text's samples may differ when it is sampled together with other texts.
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .base import Completion, SamplingParams

PROMPT_BLOCK = 64  # prompt tokens per decode (llama.cpp's CPU matrix kernels are efficient from here on)
GENERATION_ROOM = 256  # KV cells per slot on top of the prompt window; a longer answer runs fewer slots at once


class LlamaDecodeError(RuntimeError):
    """``llama_decode`` failed (out of KV cells, or an internal error)."""


@dataclass
class _Job:
    index: int
    tokens: list[int]
    max_new: int
    holder: int = -1  # the sequence holding its prompt, once evaluated
    waiting: int = 0  # samples not yet finished


@dataclass
class _Sample:
    job: _Job
    number: int
    seed: int | None
    slot: int = -1
    sampler: Any = None
    pos: int = 0
    next_token: int = 0
    generated: list[int] = field(default_factory=list)


@dataclass
class _Schedule:
    """One call's scheduling state."""

    first: int  # the holder of the call's first prompt (kept between calls)
    free: list[int]  # free sample slots
    kept: int = 0  # positions of the first prompt kept from the previous call
    running: list[_Sample] = field(default_factory=list)
    live: dict[int, list[int]] = field(default_factory=dict)  # holder sequence -> its tokens
    reserved: int = 0  # KV cells reserved by holders and running samples
    latest: _Job | None = None  # the newest input with a holder: the next input's prompt may share its prefix


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class BatchSampler:
    """Samples many sequences from one loaded model at once (see the module docstring)."""

    def __init__(
        self, llama: Any, *, parallel: int, n_ctx: int, n_threads: int, generation_room: int = GENERATION_ROOM
    ) -> None:
        import llama_cpp
        from llama_cpp import _internals

        if parallel < 2:
            raise ConfigError("parallel sampling needs at least 2 slots; 1 is the sequential path")
        limit = int(llama_cpp.llama_max_parallel_sequences())
        self.parallel = min(parallel, (limit - 1) // 2)
        self.n_ctx = n_ctx  # the window of one sequence: prompt + answer
        self._llama = llama
        self._lib = llama_cpp
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx + self.parallel * (generation_room + 1)
        params.n_seq_max = 2 * self.parallel + 1  # sample slots, then one prompt holder per running input + a cache
        # llama.cpp reserves an output per sequence and asserts (aborting the process) that they fit a batch: from 32
        # parallel sequences (65 slots) the prompt block of 64 was too small and --llm-parallel 32 crashed
        params.n_batch = params.n_ubatch = max(PROMPT_BLOCK, self.parallel, params.n_seq_max)
        params.kv_unified = True  # copies of a prompt share their cells
        params.n_threads = params.n_threads_batch = n_threads
        self._context = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self.cells = int(llama_cpp.llama_n_ctx(self._context.ctx))
        self._ctx = self._context.ctx
        self._mem = self._context.memory
        self._vocab = llama._model.vocab
        self._batch = llama_cpp.llama_batch_init(max(PROMPT_BLOCK, self.parallel), 0, 1)
        self._free_batch = weakref.finalize(self, llama_cpp.llama_batch_free, self._batch)
        self._holder_ids = list(range(self.parallel, 2 * self.parallel + 1))
        self._pool = [*self._holder_ids, *range(self.parallel)]  # next_token_logprobs: every sequence, the first first
        self._cache: list[int] = []  # the prompt (less its last token) held in the first holder between calls
        self.prompt_tokens_run = 0  # prompt tokens evaluated (the benchmark shows how much the prefix cache saves)
        self.tokens_generated = 0
        self.seconds = {"prompt": 0.0, "generate": 0.0}  # decode time spent on prompts and on sampled tokens

    def close(self) -> None:
        self._free_batch()
        self._context.close()

    # ------------------------------------------------------------------ low level
    def _decode(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        """Decode (token, position, sequence, wants logits) entries as one batch."""
        batch = self._batch
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = logits
        batch.n_tokens = len(entries)
        code = self._lib.llama_decode(self._ctx, batch)
        if code != 0:
            reason = "no room left in the KV cache" if code == 1 else f"llama_decode returned {code}"
            raise LlamaDecodeError(f"parallel sampling failed: {reason}; try fewer parallel sequences")

    def _clear(self, seq: int) -> None:
        self._lib.llama_memory_seq_rm(self._mem, seq, -1, -1)

    def _new_sampler(self, params: SamplingParams, seed: int | None) -> Any:
        lib = self._lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        if params.grammar:  # first: the tokens the grammar forbids are gone before top-k and the draw
            grammar = lib.llama_sampler_init_grammar(self._vocab, params.grammar.encode("utf-8"), b"root")
            if not grammar:
                lib.llama_sampler_free(chain)
                raise ConfigError("llama.cpp could not parse the grammar given to the sampler")
            lib.llama_sampler_chain_add(chain, grammar)
        if params.temperature <= 0:
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_greedy())
            return chain
        if params.top_k > 0:
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_k(params.top_k))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_temp(params.temperature))
        lib.llama_sampler_chain_add(
            chain, lib.llama_sampler_init_dist(lib.LLAMA_DEFAULT_SEED if seed is None else seed & 0xFFFFFFFF)
        )
        return chain

    # ------------------------------------------------------------------ prompts
    def _hold(
        self, job: _Job, live: dict[int, list[int]], busy: set[int], *, pool: Sequence[int] | None = None
    ) -> None:
        """Evaluate all but the last prompt token of ``job`` into a free holder, starting from the longest prefix it
        shares with a prompt in ``live``."""
        body = job.tokens[:-1]
        best_seq, best = -1, 0
        for seq, tokens in live.items():
            shared = _common_prefix(tokens, body)
            if shared > best:
                best_seq, best = seq, shared
        seq = next(s for s in (pool or self._holder_ids) if s not in busy and s != self._holder_ids[0])
        self._clear(seq)
        if best:
            self._lib.llama_memory_seq_cp(self._mem, best_seq, seq, 0, best)
        self._extend(seq, body, best)
        job.holder = seq

    def _start(self, body: list[int]) -> int:
        """Empty the cache but for the whole prompt blocks that the call's first prompt ``body`` shares with the
        previous call's first prompt (kept in the first holder, at cells 0..): the state is then the one a fresh
        evaluation of ``body`` would have reached at that position. Returns how many positions are kept."""
        shared = _common_prefix(self._cache, body)
        shared -= shared % PROMPT_BLOCK
        if not shared:
            self._lib.llama_memory_clear(self._mem, True)
            return 0
        first = self._holder_ids[0]
        self._lib.llama_memory_seq_keep(self._mem, first)
        self._lib.llama_memory_seq_rm(self._mem, first, shared, -1)
        return shared

    def _extend(self, seq: int, body: list[int], start: int) -> None:
        """Evaluate ``body[start:]`` into ``seq``, in blocks aligned to ``PROMPT_BLOCK`` positions."""
        started = time.perf_counter()
        pos = start
        while pos < len(body):
            end = min(len(body), (pos // PROMPT_BLOCK + 1) * PROMPT_BLOCK)
            self._decode([(body[p], p, seq, False) for p in range(pos, end)])
            pos = end
        self.prompt_tokens_run += len(body) - start
        self.seconds["prompt"] += time.perf_counter() - started

    # ------------------------------------------------------------------ the loop
    def run(
        self,
        prompts: Sequence[list[int]],
        params: SamplingParams,
        *,
        reuse_prefix: bool = True,
        on_sample: Callable[[int], None] | None = None,
        on_input: Callable[[int, list[Completion]], None] | None = None,
    ) -> list[list[Completion]]:
        """``params.n`` completions of each tokenized prompt, in input order; ``on_sample(1)`` as each sample ends,
        ``on_input(k, completions)`` as prompt ``k``'s last sample ends."""
        jobs = []
        for k, tokens in enumerate(prompts):
            if not tokens:
                raise ConfigError(f"prompt {k} is empty")
            room = self.n_ctx - len(tokens)
            if room < 1:
                raise ConfigError(f"prompt {k} has {len(tokens)} tokens; the context window is {self.n_ctx}")
            jobs.append(_Job(k, list(tokens), min(params.max_tokens, room), waiting=params.n))
        if not jobs:
            return []
        queue = deque(
            _Sample(job, i, None if (first := params.seed_of(job.index)) is None else first + i)
            for job in jobs
            for i in range(params.n)
        )
        state = _Schedule(first=self._holder_ids[0], free=list(range(self.parallel - 1, -1, -1)))
        state.kept = self._start(jobs[0].tokens[:-1] if reuse_prefix else [])
        self._cache = []  # until this call ends well, the first holder's content is unknown
        results: list[list[Completion | None]] = [[None] * params.n for _ in jobs]
        try:
            while queue or state.running:
                while queue and state.free and self._admit(queue[0], state, params, reuse_prefix):
                    queue.popleft()
                started = time.perf_counter()
                self._decode([(s.next_token, s.pos, s.slot, True) for s in state.running])
                still = []
                for i, sample in enumerate(state.running):
                    token = int(self._lib.llama_sampler_sample(sample.sampler, self._ctx, i))
                    done = self._step(sample, token, params.stop)
                    if done is None:
                        still.append(sample)
                        continue
                    results[sample.job.index][sample.number] = done
                    self._finish(sample, state)
                    if on_sample is not None:
                        on_sample(1)
                    if on_input is not None and sample.job.waiting == 0:
                        on_input(sample.job.index, [c for c in results[sample.job.index] if c is not None])
                state.running = still
                self.seconds["generate"] += time.perf_counter() - started
        finally:
            for sample in state.running:
                if sample.sampler is not None:
                    self._lib.llama_sampler_free(sample.sampler)
        self._cache = jobs[0].tokens[:-1] if reuse_prefix else []
        return [[c for c in row if c is not None] for row in results]

    def _admit(self, sample: _Sample, state: _Schedule, params: SamplingParams, reuse_prefix: bool) -> bool:
        """Start ``sample`` in a free slot; False while its KV cells would not fit beside the running samples."""
        job = sample.job
        need = job.max_new + 1 + (len(job.tokens) if job.holder < 0 else 0)
        if state.running and state.reserved + need > self.cells:
            return False
        if job.holder < 0:
            if job.index == 0:  # the call's first prompt: in the first holder, after the blocks kept from before
                self._extend(state.first, job.tokens[:-1], state.kept)
                job.holder = state.first
            else:
                self._hold(job, state.live if reuse_prefix else {}, set(state.live))
            state.live[job.holder] = job.tokens[:-1]
            state.reserved += len(job.tokens)
            previous = state.latest
            if previous is not None and previous.waiting == 0 and previous.holder != state.first:
                self._release(previous, state)
            state.latest = job
        sample.slot = state.free.pop()
        self._lib.llama_memory_seq_cp(self._mem, job.holder, sample.slot, -1, -1)
        sample.sampler = self._new_sampler(params, sample.seed)
        sample.pos = len(job.tokens) - 1
        sample.next_token = job.tokens[-1]
        state.reserved += job.max_new + 1
        state.running.append(sample)
        return True

    def _finish(self, sample: _Sample, state: _Schedule) -> None:
        """Free a finished sample's sampler, slot and cells (and its prompt's holder after its last sample; the
        newest prompt stays, the next input may share its prefix)."""
        self._lib.llama_sampler_free(sample.sampler)
        sample.sampler = None
        self._clear(sample.slot)
        state.free.append(sample.slot)
        job = sample.job
        state.reserved -= job.max_new + 1
        job.waiting -= 1
        if job.waiting == 0 and job is not state.latest and job.holder != state.first:
            self._release(job, state)

    def _release(self, job: _Job, state: _Schedule) -> None:
        state.reserved -= len(state.live.pop(job.holder)) + 1
        self._clear(job.holder)

    def next_token_logprobs(
        self, prompts: Sequence[list[int]], token_ids: Sequence[int], *, reuse_prefix: bool = True
    ) -> list[list[float]]:
        """Log-probabilities of ``token_ids`` as the next token after each prompt (log-softmax over the whole
        vocabulary). A prompt that begins another one of its group is read off that one's sequence (the logits at its
        last position): one sequence per branch of the group's prompt tree (:func:`~counterfair.llm.values.branches`),
        not one per prompt — a forced answer's nodes, ``{"decision": "`` then ``interview", "score": `` then ``1``,
        are one sequence read at three places. A group holds as many branches as the context has sequences
        (:attr:`capacity`) and the KV cells they need; each branch's beginning is evaluated as in :meth:`run`, the
        tokens after it, every branch's together, in shared batches that give the logits where a prompt ends."""
        import numpy as np

        n_vocab = int(self._lib.llama_vocab_n_tokens(self._vocab))
        ids = list(token_ids)
        out: list[list[float]] = []
        for group in self._groups([list(p) for p in prompts]):
            found: dict[int, list[float]] = {}
            for batch, readers in self._branches(group, reuse_prefix):
                self._decode(batch)
                for i, wanting in readers:
                    logits = np.ctypeslib.as_array(self._lib.llama_get_logits_ith(self._ctx, i), shape=(n_vocab,))
                    top = float(logits.max())
                    log_norm = top + float(np.log(np.exp(logits - top).sum()))
                    row = [float(logits[t]) - log_norm for t in ids]
                    found.update(dict.fromkeys(wanting, row))
            out += [found[k] for k in range(len(group))]
        return out

    @property
    def capacity(self) -> int:
        """The sequences one group of :meth:`next_token_logprobs` may hold (every slot: no sample runs then)."""
        return len(self._pool)

    def _groups(self, prompts: list[list[int]]) -> Iterator[list[list[int]]]:
        """``prompts`` in order, in groups of at most :attr:`capacity` branches whose cells fit the cache (a group's
        branch count only grows as prompts join it, so a run of prompts that fits is never split)."""
        from .values import branches

        group: list[list[int]] = []
        cells = 0  # the group's distinct prefixes, and a cell per branch: about what its sequences hold
        for prompt in prompts:
            if not prompt:
                raise ConfigError("a prompt is empty")
            new = len(prompt) - max((_common_prefix(p, prompt) for p in group), default=0) + 1
            if group and (branches([*group, prompt]) > self.capacity or cells + new > self.cells - PROMPT_BLOCK):
                yield group
                group, cells, new = [], 0, len(prompt) + 1
            group.append(prompt)
            cells += new
        if group:
            yield group

    def _branches(
        self, group: list[list[int]], reuse_prefix: bool
    ) -> Iterator[tuple[list[tuple[int, int, int, bool]], list[tuple[int, list[int]]]]]:
        """Evaluate the beginnings of ``group``'s branches (each prompt that no other prompt of the group begins with),
        then yield the batches of the tokens after them, each with the batch entries whose logits end prompts (and
        which prompts). A branch's beginning ends where its first prompt's last token is."""
        reads = list(range(len(group)))  # the prompt whose sequence gives each prompt's logits
        for k, tokens in enumerate(group):
            longer = [
                j
                for j, other in enumerate(group)
                if other[: len(tokens)] == tokens and (len(other), -j) > (len(tokens), -k)
            ]
            if longer:
                reads[k] = max(longer, key=lambda j: len(group[j]))
        for k in range(len(group)):  # a prompt read off one that is read off another: the longest holds both
            while reads[reads[k]] != reads[k]:
                reads[k] = reads[reads[k]]
        branches = [k for k in range(len(group)) if reads[k] == k]
        ends = {b: {} for b in branches}  # type: dict[int, dict[int, list[int]]]
        for k, b in enumerate(reads):
            ends[b].setdefault(len(group[k]) - 1, []).append(k)
        state = _Schedule(first=self._holder_ids[0], free=[])
        first = branches[0]
        head = min(ends[first])
        state.kept = self._start(group[first][:head] if reuse_prefix else [])
        self._cache = []
        ready: dict[int, list[int]] = {}  # holders whose beginning is evaluated (a later one may copy from them)
        after: list[tuple[tuple[int, int, int, bool], list[int]]] = []  # (entry, prompts its logits end)
        for n, b in enumerate(branches):
            tokens, held = group[b], min(ends[b])
            body = tokens[:held]
            if n == 0:
                self._extend(state.first, body, state.kept)
                holder = state.first
                ready[holder] = body
            else:
                seq, shared = max(
                    ((s, _common_prefix(t, body)) for s, t in (ready.items() if reuse_prefix else ())),
                    key=lambda found: found[1],
                    default=(-1, 0),
                )
                if shared and len(body) - shared <= PROMPT_BLOCK:  # a copy and a few tokens, decoded with the rest
                    holder = next(h for h in self._pool[1:] if h not in state.live)
                    self._clear(holder)
                    self._lib.llama_memory_seq_cp(self._mem, seq, holder, 0, shared)
                    held = shared
                else:
                    job = _Job(n, [*body, 0], 1)
                    self._hold(job, ready if reuse_prefix else {}, set(state.live), pool=self._pool)  # evaluated cells
                    holder = job.holder
                    ready[holder] = body
            state.live[holder] = body
            after += [((tokens[p], p, holder, p in ends[b]), ends[b].get(p, [])) for p in range(held, len(tokens))]
        try:
            for at in range(0, len(after), PROMPT_BLOCK):
                block = after[at : at + PROMPT_BLOCK]
                self.prompt_tokens_run += len(block)
                yield [entry for entry, _ in block], [(i, wanting) for i, (_, wanting) in enumerate(block) if wanting]
        finally:
            for seq in state.live:
                if seq != state.first:
                    self._clear(seq)
            self._lib.llama_memory_seq_rm(self._mem, state.first, head, -1)  # what followed the kept beginning
            self._cache = group[first][:head] if reuse_prefix else []

    def _step(self, sample: _Sample, token: int, stop: Sequence[str]) -> Completion | None:
        """Take ``token`` into ``sample``; the finished completion, or None while it goes on."""
        self.tokens_generated += 1
        if self._lib.llama_vocab_is_eog(self._vocab, token):
            return Completion(self._text(sample.generated), "stop")
        sample.generated.append(token)
        text = self._text(sample.generated)
        if stop:
            cuts = [text.find(s) for s in stop if s and s in text]
            if cuts:
                return Completion(text[: min(cuts)], "stop")
        if len(sample.generated) >= sample.job.max_new:
            return Completion(text, "length")
        sample.pos += 1
        sample.next_token = token
        return None

    def _text(self, tokens: list[int]) -> str:
        return bytes(self._llama.detokenize(tokens)).decode("utf-8", errors="ignore")


__all__ = ["BatchSampler", "LlamaDecodeError"]
