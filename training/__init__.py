"""What train.py runs on: a rank's set-up for its role, the parts of a step shared by the recipe
and its variants, and the variants, each entering train.py at one line and wrapping or replacing
the plain parts from its own module (imports point one way: train.py imports training/, training/
imports learner/, bookkeeping/, rollout.py, sandbox.py and the rest, never train.py).

    setup.py            Run (what one rank holds), setup with one _build for both layouts, resume,
                        announce, teardown
    step.py             Rollout, sync_engine (step 2), roll_out (step 3), update_policy (step 5)
    refill.py           dynamic sampling (grpo.refill_rounds >= 1): the rollout's episodes refilled
    tensor_parallel.py  a tensor-parallel engine's ranks roll out as one (vllm tp > 1)
    overlap.py          the overlapped driver (max_off_policy_steps >= 1): the learner thread
    ahead.py            the next rollout's sandboxes, started while the learner trains
    disaggregated.py    the disaggregated driver (rollout_ranks >= 1): the trainers' and the
                        rollout ranks' loops
"""
