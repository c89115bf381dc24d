"""The learner side of training, apart from the recipe in train.py (arrows point one way: train.py
imports learner/, learner/ imports grpo.py, configs.py, model.py and hf/, never train.py).

    packing.py      trajectories -> Samples -> packed MicroBatches
    update.py       the GRPO update: forward log-probs, loss over micro-batches and ranks, AdamW
    sync.py         the policy's FSDP2 shards -> this rank's generation engine
    distributed.py  process group, collective helpers, the FSDP2-sharded policy
"""
