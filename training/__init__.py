"""What train.py runs on: a rank's set-up for its role and the parts of a step shared by the recipe
and its variants, and the variants themselves, each entered from train.py by one line (imports
point one way: train.py imports training/, training/ imports learner/, bookkeeping/, rollout.py,
sandbox.py and the rest, never train.py).

    setup.py          Run (what one rank holds), setup with one _build for both layouts, resume,
                      announce, teardown
    step.py           sync_engine (step 2), roll_out (step 3), learn (step 5); tensor parallelism
                      and staleness handled here
    overlap.py        the overlapped driver (max_off_policy_steps >= 1): the learner thread
    disaggregated.py  the disaggregated driver (rollout_ranks >= 1): a trainer's and a rollout
                      rank's part in learner/layout.py's loops
"""
