"""TorchEngine and the decode path inside the agent loop: token-exact trajectories against the chat
template, n-gram drafts, sampling, KV reuse (real SmolLM2 tokenizer and model, real containers)."""

import asyncio
import math

import pytest
import torch
from rollout_helpers import (
    run,
)

import engines as E
from agent.chat import ChatFormat
from configs import RolloutConfig
from engines import decode as D
from engines.speculation import NgramIndex, PromptLookup

# ----------------------------------------------------------------------------- TorchEngine


@pytest.mark.slow
@pytest.mark.parametrize("fast_cpu", [True, False], ids=["fast", "plain"])
def test_torch_engine_batched_greedy_equals_one_at_a_time(tok, smol, fast_cpu):
    chat = ChatFormat(tok, "markdown")
    prompts = [
        chat.prompt_ids(q)[1]
        for q in (
            "Create /app/hello.txt containing hello",
            "Count the lines of /app/a.txt",
            "What is the capital of France?",
            "Rename /app/a.txt to /app/b.txt",
        )
    ]
    sp = E.SamplingParams(temperature=0.0, max_tokens=12)

    async def go():
        eng = E.TorchEngine(smol, tok, max_batch=4, max_seq_len=512, fast_cpu=fast_cpu)
        one = [await eng.generate(p, sp) for p in prompts]
        eng2 = E.TorchEngine(smol, tok, max_batch=4, max_seq_len=512, fast_cpu=fast_cpu)
        many = await asyncio.gather(*(eng2.generate(p, sp) for p in prompts))
        await eng.aclose()
        await eng2.aclose()
        return one, many

    one, many = asyncio.run(go())
    for a, b in zip(one, many):
        assert a.token_ids == b.token_ids and a.finish_reason == b.finish_reason
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-4
    # greedy log-probs are log_softmax(logits)[token], the learner's quantity at temperature 1
    with torch.no_grad():
        ids = torch.tensor([prompts[2] + one[2].token_ids])
        ref = torch.log_softmax(smol(ids)[0, len(prompts[2]) - 1 : -1].float(), -1)
        ref = ref.gather(1, torch.tensor(one[2].token_ids)[:, None])[:, 0]
    assert torch.allclose(torch.tensor(one[2].logprobs), ref, atol=1e-4)


@pytest.mark.slow
def test_torch_engine_fast_and_plain_paths_give_identical_greedy_tokens(tok, smol):
    chat = ChatFormat(tok, "markdown")
    prompts = [
        chat.prompt_ids(q)[1]
        for q in (
            "Create /app/hello.txt containing hello",
            "Count the lines of /app/a.txt",
            "What is the capital of France?",
        )
    ]
    sp = E.SamplingParams(temperature=0.0, max_tokens=20)

    async def go(fast_cpu):  # three rows: batched steps, then drafts once one finishes
        eng = E.TorchEngine(
            smol, tok, max_batch=3, max_seq_len=512, stop_ids=set(), fast_cpu=fast_cpu
        )
        outs = await asyncio.gather(*(eng.generate(p, sp) for p in prompts))
        await eng.aclose()
        return outs

    fast, plain = asyncio.run(go(True)), asyncio.run(go(False))
    assert [len(c.token_ids) for c in plain] == [20, 20, 20]
    assert [c.token_ids for c in fast] == [c.token_ids for c in plain]
    assert (
        max(abs(x - y) for a, b in zip(fast, plain) for x, y in zip(a.logprobs, b.logprobs)) < 1e-4
    )


def test_torch_engine_sleep_frees_the_kv_cache_and_packed_weights_and_wakes_to_the_same_tokens(
    tiny_dir,
):
    from engines import cpu_fast
    from hf import weights

    model = weights.load_hf(tiny_dir).eval()
    tok = weights.load_tokenizer(tiny_dir)
    eng = E.TorchEngine(model, tok, max_batch=4, max_seq_len=128, stop_ids=set())
    prompts = [[5 + i, 17, 33, 2 + i, 9] for i in range(4)]  # 4 rows: the packed path runs
    sp = E.SamplingParams(temperature=0.0, max_tokens=12)

    async def go():
        return await asyncio.gather(*(eng.generate(p, sp) for p in prompts))

    before = asyncio.run(go())
    assert model in cpu_fast._PACKED  # built by the decode steps of 4 rows
    eng.sleep()
    assert all(b.self_attn.kv_cache is None for b in model.model.layers)
    assert model not in cpu_fast._PACKED
    eng.wake_up()
    after = asyncio.run(go())
    assert [c.token_ids for c in after] == [c.token_ids for c in before]
    assert [c.logprobs for c in after] == [c.logprobs for c in before]
    eng.sleep()
    again = asyncio.run(go())  # generate wakes a sleeping engine itself
    assert [c.token_ids for c in again] == [c.token_ids for c in before]
    # train.py's engine drops its weights too; the next sync brings them back
    saved = {n: p.detach().clone() for n, p in model.named_parameters()}
    eng.drop_weights_on_sleep = True
    eng.sleep()
    assert all(p.numel() == 0 for p in model.parameters())
    with pytest.raises(RuntimeError, match="weights dropped by sleep"):
        eng.wake_up()
    eng.load_weights(saved.items())
    synced = asyncio.run(go())
    assert [c.token_ids for c in synced] == [c.token_ids for c in before]
    # the same values in new memory: kernels may round in another order (fp32, ~1e-6)
    gaps = [abs(x - y) for a, b in zip(synced, before) for x, y in zip(a.logprobs, b.logprobs)]
    assert max(gaps) < 1e-5


def test_torch_engine_sleep_waits_for_the_decode_step_a_cancelled_rollout_left_in_flight(
    tiny_dir,
):
    """A stop signal cancels the rollout's requests while the worker thread decodes; train.py then
    calls sleep() at once, which freed the weights under the running step (a rank's SIGSEGV in CI,
    test_pipeline's overlapped SIGTERM test). sleep() now waits for that step."""
    import threading
    import time

    from hf import weights

    model = weights.load_hf(tiny_dir).eval()
    tok = weights.load_tokenizer(tiny_dir)
    eng = E.TorchEngine(
        model, tok, max_batch=4, max_seq_len=256, stop_ids=set(), drop_weights_on_sleep=True
    )
    saved = {n: p.detach().clone() for n, p in model.named_parameters()}
    prompts = [[5 + i, 17, 33, 2 + i, 9] for i in range(4)]
    sp = E.SamplingParams(temperature=0.0, max_tokens=12)
    loop = asyncio.new_event_loop()

    async def greedy():
        return await asyncio.gather(*(eng.generate(p, sp) for p in prompts))

    before = loop.run_until_complete(greedy())
    inside, returned = threading.Event(), threading.Event()
    steps = eng._steps

    def traced_steps(*args):
        inside.set()
        # widens the window the race needs: the step is still running when sleep() is called
        time.sleep(0.3)
        steps(*args)
        returned.set()

    eng._steps = traced_steps

    async def start_then_cancel():
        long = E.SamplingParams(temperature=0.0, max_tokens=200)
        tasks = [loop.create_task(eng.generate(p, long)) for p in prompts]
        while not inside.is_set():
            await asyncio.sleep(0.001)
        for t in tasks:
            t.cancel()  # cancels each request's future at once, as the stop handler's cancel does
        return tasks

    tasks = loop.run_until_complete(start_then_cancel())
    assert eng.computing  # the event loop stopped; the worker thread is still in its step
    eng.sleep()
    assert returned.is_set() and not eng.computing
    assert eng.weights_dropped
    assert all(b.self_attn.kv_cache is None for b in model.model.layers)
    # the next rollout: the cancelled requests end, the sync brings the weights back
    eng._steps = steps
    async def ended():
        return await asyncio.gather(*tasks, return_exceptions=True)

    results = loop.run_until_complete(ended())
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    eng.load_weights(saved.items())
    again = loop.run_until_complete(greedy())
    assert [c.token_ids for c in again] == [c.token_ids for c in before]
    loop.run_until_complete(eng.aclose())
    loop.close()


@pytest.mark.slow
@pytest.mark.parametrize("fast_cpu", [True, False], ids=["fast", "plain"])
def test_torch_engine_prefix_reuse_continues_a_cached_turn_exactly(tok, smol, fast_cpu):
    chat = ChatFormat(tok, "markdown")
    _, prompt = chat.prompt_ids("Create /app/hello.txt containing hello")
    sp = E.SamplingParams(temperature=0.0, max_tokens=8)

    async def go():
        eng = E.TorchEngine(smol, tok, max_batch=2, max_seq_len=512, fast_cpu=fast_cpu)
        first = await eng.generate(prompt, sp)
        turn2 = (
            prompt
            + first.token_ids
            + chat.observation_ids(
                [{"role": "user", "content": "$ ls\nexit code: 0"}],
                closed=first.token_ids[-1] == chat.eot_id,
            )
        )
        slot, cached = eng._pick_slot(turn2)
        reused = await eng.generate(turn2, sp)
        await eng.aclose()
        kept = eng.accepted_drafts
        fresh_eng = E.TorchEngine(smol, tok, max_batch=2, max_seq_len=512, fast_cpu=fast_cpu)
        fresh = await fresh_eng.generate(turn2, sp)
        await fresh_eng.aclose()
        return len(prompt) + len(first.token_ids) - 1, cached, reused, fresh, kept

    expected_cached, cached, reused, fresh, kept = asyncio.run(go())
    assert (
        kept > 0
    )  # drafts were kept in both turns' decoding: the slot's token list must still match its K/V
    assert (
        cached == expected_cached
    )  # prompt + all generated tokens but the last (never fed back) are reused
    assert reused.token_ids == fresh.token_ids
    assert max(abs(x - y) for x, y in zip(reused.logprobs, fresh.logprobs)) < 1e-4


@pytest.mark.slow
def test_torch_engine_group_prefills_a_shared_prompt_once_with_the_same_tokens(tok, smol):
    _, prompt = ChatFormat(tok, "markdown").prompt_ids("Count the lines of /app/a.txt")
    sp = E.SamplingParams(temperature=0.0, max_tokens=8)

    async def go():
        alone = E.TorchEngine(smol, tok, max_batch=1, max_seq_len=512)
        ref = await alone.generate(prompt, sp)
        await alone.aclose()
        eng = E.TorchEngine(smol, tok, max_batch=3, max_seq_len=512)
        group = await asyncio.gather(*(eng.generate(prompt, sp) for _ in range(3)))
        await eng.aclose()
        return ref, group, eng.prefilled_tokens

    ref, group, prefilled = asyncio.run(go())
    assert (
        prefilled == len(prompt) + 2
    )  # the 2nd and 3rd copy the first's K/V and prefill only the last token
    for c in group:
        assert c.token_ids == ref.token_ids
        assert max(abs(x - y) for x, y in zip(c.logprobs, ref.logprobs)) < 1e-4


def _drafts(prompt, tokens, max_tokens, k=5, replies=(), max_seq_len=1 << 30):
    """(indices i of `tokens` that TorchEngine alone (one sequence, speculate_tokens k) decodes as accepted draft
    tokens, so i + 1 comes from the same step; number of draft tokens fed): TorchEngine._step replayed on known
    tokens, with the replies the engine finished before (`replies`, oldest first) as the second draft source."""
    lookup, index, i, accepted, fed = PromptLookup(), NgramIndex(), 1, [], 0
    for reply in replies:
        index.extend(reply)
    while i < len(tokens):
        n = min(k, max_tokens - i - 1, max_seq_len - len(prompt) - i - 1)
        draft = (
            (lookup.draft(prompt, tokens[:i], n) or index.propose(lookup.context, n))
            if n >= 1
            else []
        )
        fed += len(draft)
        n = 0
        while n < len(draft) and i + n < len(tokens) and draft[n] == tokens[i + n]:
            n += 1
        accepted += range(i, i + n)
        i += 1 + n
    return accepted, fed


@pytest.mark.slow
@pytest.mark.parametrize("fast_cpu", [True, False], ids=["fast", "plain"])
def test_torch_engine_speculation_gives_the_same_tokens_in_fewer_steps(tok, smol, fast_cpu):
    _, prompt = ChatFormat(tok, "markdown").prompt_ids("Create /app/hello.txt containing hello")
    greedy = E.SamplingParams(temperature=0.0, max_tokens=24)
    sampled = E.SamplingParams(temperature=0.7, top_p=0.95, top_k=40, max_tokens=24, seed=11)

    async def go(speculate):
        eng = E.TorchEngine(
            smol,
            tok,
            max_batch=1,
            max_seq_len=512,
            stop_ids=set(),
            speculate_max_batch=1 if speculate else 0,
            fast_cpu=fast_cpu,
        )
        outs = [await eng.generate(prompt, sp) for sp in (greedy, sampled)]
        await eng.aclose()
        return outs, eng

    plain, eng0 = asyncio.run(go(False))
    spec, eng1 = asyncio.run(go(True))
    assert (eng0.drafted_tokens, eng0.accepted_drafts) == (0, 0)
    for a, b in zip(plain, spec):
        assert (b.token_ids, b.finish_reason) == (a.token_ids, "length") and len(a.token_ids) == 24
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-4
    # every draft token kept is one decode step saved: the greedy reply copies "/app/hello.txt" and its own fences
    kept, fed = _drafts(prompt, plain[0].token_ids, 24)
    kept2, fed2 = _drafts(prompt, plain[1].token_ids, 24, replies=[plain[0].token_ids])
    assert len(kept) >= 8 and (eng1.accepted_drafts, eng1.drafted_tokens) == (
        len(kept) + len(kept2),
        fed + fed2,
    )
    assert any(
        j == i + 1 for i, j in zip(kept, kept[1:])
    )  # two draft tokens kept in one step: a chain


@pytest.mark.slow
def test_torch_engine_drafts_from_finished_replies_where_the_own_context_has_none(tok, smol):
    _, prompt = ChatFormat(tok, "markdown").prompt_ids(
        "What is the capital of France?"
    )  # "Paris" is new
    sp = E.SamplingParams(temperature=0.0, max_tokens=24)

    async def go():
        eng = E.TorchEngine(smol, tok, max_batch=1, max_seq_len=512, stop_ids=set())
        first = await eng.generate(prompt, sp)
        counts = eng.accepted_drafts, eng.drafted_tokens
        second = await eng.generate(
            prompt, sp
        )  # the same reply; its new tokens occurred in the first reply
        await eng.aclose()
        return (
            first,
            second,
            counts,
            (eng.accepted_drafts - counts[0], eng.drafted_tokens - counts[1]),
        )

    first, second, counts, second_counts = asyncio.run(go())
    assert second.token_ids == first.token_ids
    own_only = _drafts(prompt, second.token_ids, 24)
    with_replies = _drafts(prompt, second.token_ids, 24, replies=[first.token_ids])
    assert counts == (len(own_only[0]), own_only[1])
    assert second_counts == (len(with_replies[0]), with_replies[1])
    assert len(with_replies[0]) > len(
        own_only[0]
    )  # the fallback kept more draft tokens than own lookup alone


@pytest.mark.slow
@pytest.mark.parametrize("fast_cpu", [True, False], ids=["fast", "plain"])
def test_torch_engine_speculation_in_a_batch_gives_the_same_tokens(tok, smol, fast_cpu):
    chat = ChatFormat(tok, "markdown")
    prompts = [
        chat.prompt_ids(q)[1]
        for q in (
            "Create /app/hello.txt containing hello",
            "Count the lines of /app/a.txt",
            "Rename /app/a.txt to /app/b.txt",
        )
    ]
    sps = [
        E.SamplingParams(temperature=0.0, max_tokens=16),
        E.SamplingParams(temperature=0.7, top_k=40, max_tokens=16, seed=3),
        E.SamplingParams(temperature=1.0, max_tokens=9, seed=4),
    ]

    async def go(speculate_max_batch):
        eng = E.TorchEngine(
            smol,
            tok,
            max_batch=3,
            max_seq_len=512,
            stop_ids=set(),
            speculate_max_batch=speculate_max_batch,
            fast_cpu=fast_cpu,
        )
        outs = await asyncio.gather(*(eng.generate(p, sp) for p, sp in zip(prompts, sps)))
        await eng.aclose()
        return outs, eng

    plain, _ = asyncio.run(go(0))
    spec, eng = asyncio.run(
        go(3)
    )  # three rows with and without drafts in one step; one row finishes first
    assert eng.accepted_drafts >= 4 and eng.drafted_tokens > eng.accepted_drafts
    for a, b in zip(plain, spec):
        assert (b.token_ids, b.finish_reason) == (a.token_ids, "length")
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-4
    assert [len(c.token_ids) for c in spec] == [16, 16, 9]
    # after steps with padded drafts of different lengths, each slot holds the K/V of exactly its tokens
    assert sorted(eng._slot_tokens) == sorted(p + c.token_ids[:-1] for p, c in zip(prompts, spec))


@pytest.mark.slow
def test_torch_engine_speculation_stops_exactly_at_max_tokens_stop_ids_and_stop_check(tok, smol):
    _, prompt = ChatFormat(tok, "markdown").prompt_ids("Create /app/hello.txt containing hello")

    async def fresh(
        sp, stop_ids=frozenset()
    ):  # an engine without earlier replies: drafts as _drafts replays them
        eng = E.TorchEngine(smol, tok, max_batch=1, max_seq_len=512, stop_ids=set(stop_ids))
        out = await eng.generate(prompt, sp)
        await eng.aclose()
        return out

    async def go():
        full = await fresh(E.SamplingParams(temperature=0.0, max_tokens=16))
        kept = _drafts(prompt, full.token_ids, 16)[0]
        cut = {}
        for i in kept[:3]:  # token i is an accepted draft: the token after it must not be sampled
            # max_tokens = i + 1: no draft is fed for the last allowed token
            cut[i, "length"] = await fresh(E.SamplingParams(temperature=0.0, max_tokens=i + 1))
            cut[i, "stop"] = await fresh(
                E.SamplingParams(
                    temperature=0.0, max_tokens=16, stop_check=lambda ids, n=i + 1: len(ids) >= n
                )
            )
        first = next(
            i for i in kept if full.token_ids[i] not in full.token_ids[:i]
        )  # a new token, kept as a draft
        cut[first, "stop id"] = await fresh(
            E.SamplingParams(temperature=0.0, max_tokens=16), {full.token_ids[first]}
        )
        return full, kept, cut

    full, kept, cut = asyncio.run(go())
    assert len(kept) >= 3 and len(cut) == 7
    for (i, reason), c in cut.items():
        assert (c.token_ids, c.finish_reason, len(c.logprobs)) == (
            full.token_ids[: i + 1],
            reason.split()[0],
            i + 1,
        )


@pytest.mark.slow
def test_torch_engine_speculation_near_max_seq_len_and_the_bounded_replies_index(tok, smol):
    _, prompt = ChatFormat(tok, "markdown").prompt_ids("Create /app/hello.txt containing hello")
    sp = E.SamplingParams(temperature=0.0, max_tokens=64)

    async def go(
        speculate_max_batch,
    ):  # the cache ends 12 tokens after the prompt: drafts must not pass it
        eng = E.TorchEngine(
            smol,
            tok,
            max_batch=1,
            max_seq_len=len(prompt) + 12,
            stop_ids=set(),
            speculate_max_batch=speculate_max_batch,
        )
        eng.REPLIES_INDEXED = 24
        outs, indexed = [], []
        for _ in range(3):
            outs.append(await eng.generate(prompt, sp))
            indexed.append(len(eng._replies.context))
            if len(outs) == 1:
                first_counts = eng.accepted_drafts, eng.drafted_tokens
        await eng.aclose()
        return outs, first_counts, indexed

    plain, _, _ = asyncio.run(go(0))
    spec, first_counts, indexed = asyncio.run(go(1))
    for a, b in zip(plain, spec):
        assert (b.token_ids, b.finish_reason) == (a.token_ids, "length") and len(a.token_ids) == 12
    # no draft token is fed that could only be kept past the cache's end
    kept, fed = _drafts(prompt, spec[0].token_ids, 64, max_seq_len=len(prompt) + 12)
    assert len(kept) > 0 and first_counts == (len(kept), fed)
    assert indexed == [12, 24, 12]  # 24 + 12 > 24 tokens: the index restarted with the third reply
    with pytest.raises(ValueError, match="speculate_tokens=0: must be >= 1"):
        E.TorchEngine(smol, tok, max_batch=1, max_seq_len=64, speculate_tokens=0)


def test_prompt_lookup_drafts_the_followers_of_the_longest_latest_suffix():
    assert PromptLookup(max_n=3).draft([5], []) == []  # nothing before the suffix
    lookup, prompt = PromptLookup(max_n=3), [1, 2, 3, 9, 2, 4, 8]
    assert lookup.draft(prompt, [1, 2]) == [
        3
    ]  # 2-gram (1, 2) -> 3 beats the later 1-gram (2,) -> 4
    assert lookup.draft(prompt, [1, 2], k=4) == [3, 9, 2, 4]  # the tokens after that occurrence
    assert lookup.draft(prompt, [1, 2, 4, 1, 2], k=4) == [
        4,
        1,
        2,
    ]  # (1, 2) was last followed by 4: the context ends
    assert lookup.draft(prompt, [1, 2, 4, 1, 2, 7], k=2) == []  # 7 never occurred before
    with pytest.raises(ValueError, match="context shrank from 13 to 8 tokens"):
        lookup.draft(prompt, [1])
    with pytest.raises(ValueError, match="max_n=0"):
        PromptLookup(max_n=0)
    with pytest.raises(ValueError, match="k=0"):
        PromptLookup().draft(prompt, [], k=0)


def test_ngram_index_proposes_from_other_texts():
    index = NgramIndex(max_n=2)
    index.extend([7, 8, 9])
    index.extend([5, 8, 6, 1])  # the latest 8 is followed by 6
    assert index.context == [7, 8, 9, 5, 8, 6, 1]
    assert index.propose([3, 7, 8], k=3) == [9, 5, 8]  # 2-gram (7, 8) beats the 1-gram (8,)
    assert index.propose([4, 8], k=3) == [6, 1]
    assert index.propose([4], k=3) == []
    with pytest.raises(ValueError, match="k=-1"):
        index.propose([8], k=-1)


def test_sample_tokens_top_k_1_and_tiny_top_p_are_greedy_with_logprob_0_after_truncation():
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.0], [0.5, 0.1, 0.2, 2.0]])
    T = torch.tensor([2.0, 2.0])
    tok, lp = D.sample_tokens(
        logits, T, torch.tensor([1.0, 1e-6]), torch.tensor([1, 0]), torch.tensor([0.99, 0.99])
    )
    assert tok.tolist() == [1, 3]
    assert lp.tolist() == [
        0.0,
        0.0,
    ]  # one token kept: q = 1 under the truncated, renormalised distribution
    # no truncation: log_softmax(logits / T)[token]; greedy (T = 0): log_softmax(logits)[argmax]
    tok, lp = D.sample_tokens(
        logits,
        torch.tensor([2.0, 0.0]),
        torch.ones(2),
        torch.zeros(2, dtype=torch.long),
        torch.tensor([0.99, 0.5]),
    )
    assert tok.tolist() == [3, 3]
    assert torch.allclose(
        lp,
        torch.stack(
            [torch.log_softmax(logits[0] / 2.0, -1)[3], torch.log_softmax(logits[1], -1)[3]]
        ),
    )
    # inverse CDF at temperature 1 without truncation: probabilities [0.1, 0.2, 0.3, 0.4]
    logits = torch.log(torch.tensor([[0.1, 0.2, 0.3, 0.4]] * 4))
    tok, _ = D.sample_tokens(
        logits,
        torch.ones(4),
        torch.ones(4),
        torch.zeros(4, dtype=torch.long),
        torch.tensor([0.05, 0.25, 0.55, 0.95]),
    )
    assert tok.tolist() == [0, 1, 2, 3]


def test_sample_tokens_row_does_not_depend_on_its_batch_mates():
    # an untruncated row draws in vocabulary order: p = [0.1, 0.2, 0.3, 0.4], u = 0.25 -> token 1; sorted
    # order (what a truncated batch-mate would impose on it) would give token 3 (0.4 > 0.25)
    logits = torch.log(torch.tensor([[0.1, 0.2, 0.3, 0.4]] * 2))
    ones, none = torch.ones(2), torch.zeros(2, dtype=torch.long)
    alone, lp_alone = D.sample_tokens(
        logits[:1], ones[:1], ones[:1], none[:1], torch.tensor([0.25])
    )
    mixed, lp_mixed = D.sample_tokens(
        logits, ones, ones, torch.tensor([0, 2]), torch.tensor([0.25, 0.25])
    )
    assert alone.tolist() == [1] and mixed.tolist() == [
        1,
        3,
    ]  # the top-2 row: q = [4/7, 3/7] over [3, 2]
    assert lp_mixed[0].item() == lp_alone[0].item() == pytest.approx(math.log(0.2))
    assert lp_mixed[1].item() == pytest.approx(math.log(4 / 7))


def test_sample_tokens_logprobs_match_sampling_frequencies_with_top_k_and_top_p():
    # T 0.7, top-k 5, top-p 0.8 on 8 tokens: softmax(logits / 0.7) = [.451 .244 .134 .072 .039 .028 .021 .011];
    # top-k keeps 5; top-p keeps tokens whose preceding mass < 0.8: [0, 1, 2] (0.829 before token 3).
    logits = torch.tensor([2.0, 1.57, 1.15, 0.72, 0.29, 0.05, -0.15, -0.6])
    n = 40_000
    g = torch.Generator().manual_seed(0)
    tok, lp = D.sample_tokens(
        logits.expand(n, -1),
        torch.full((n,), 0.7),
        torch.full((n,), 0.8),
        torch.full((n,), 5, dtype=torch.long),
        torch.rand(n, generator=g),
    )
    counts = torch.bincount(tok, minlength=8)
    assert (
        counts[3:].tolist() == [0] * 5
    )  # outside top-p (3, 4) and outside top-k (5, 6, 7): never sampled
    reported = {}
    for t, x in zip(tok.tolist(), lp.tolist()):
        reported.setdefault(t, set()).add(round(x, 5))
    assert sorted(reported) == [0, 1, 2] and all(len(v) == 1 for v in reported.values())
    q = torch.tensor([math.exp(reported[t].pop()) for t in range(3)])
    p = torch.softmax(logits / 0.7, -1)[:3]
    assert torch.allclose(q, p / p.sum(), atol=1e-5) and abs(q.sum().item() - 1.0) < 1e-5
    # chi-square goodness of fit of the counts to the reported probabilities, 2 degrees of freedom
    expected = q.double() * n
    chi2 = (((counts[:3].double() - expected) ** 2) / expected).sum().item()
    assert (
        chi2 < 13.82
    )  # the 0.999 quantile of chi-square(2): the reported q is the sampled distribution
    # the old convention (log-probs before truncation, p instead of q) fails the same test
    old = p.double() * n
    assert (((counts[:3].double() - old) ** 2) / old).sum().item() > 1000


@pytest.mark.docker
@pytest.mark.slow
def test_smollm2_torch_engine_runs_8_concurrent_episodes_on_2_easy_tasks(tok, tasks, smol):
    cfg = RolloutConfig(
        max_turns=2,
        max_context_tokens=1024,
        max_tokens_per_turn=32,
        episode_timeout_s=300.0,
        temperature=1.0,
        max_concurrent_episodes=8,
    )
    eng = E.TorchEngine(smol, tok, max_batch=8, max_seq_len=1024)
    picked = [tasks["write-hello-file"], tasks["count-lines"]]
    assert all(t.difficulty == "easy" for t in picked)
    trajs = run(picked, eng, tok, cfg, n=4, seed=0)
    asyncio.run(eng.aclose())
    assert [(t.task_id, t.group_index) for t in trajs] == [
        (t.id, j) for t in picked for j in range(4)
    ]
    for t in trajs:
        assert t.error is None and t.reward is not None and 0.0 <= t.reward <= 1.0
        assert t.stop_reason in (
            "finish",
            "max_turns",
            "max_tokens_per_turn",
            "format_errors",
            "max_context",
        )
        assert t.num_turns >= 1 and sum(t.loss_mask) >= 1
        assert len(t.token_ids) == len(t.loss_mask) == len(t.logprobs) <= 1024
        gen_lp = [lp for lp, m in zip(t.logprobs, t.loss_mask) if m]
        assert all(lp <= 0.0 for lp in gen_lp) and any(lp < 0.0 for lp in gen_lp)
