"""The learner side of training, apart from the recipe in train.py and the rank's set-up in
training/ (arrows point one way: train.py and training/ import learner/; learner/ imports grpo.py,
configs.py, model.py, hf/ and bookkeeping/, never train.py or training/, and knows nothing of
containers or tasks).

    packing.py      trajectories -> Samples -> packed MicroBatches
    update.py       the GRPO update: forward log-probs, loss over micro-batches and ranks, AdamW;
                    staleness and TIS for stale samples
    sync.py         the policy's FSDP2 shards -> this rank's generation engine
    distributed.py  process group, collective helpers, the FSDP2-sharded policy
    layout.py       the disaggregated layout: process groups per role, the policy broadcast (M),
                    the groups' exchange (G), the trainers' and the rollout ranks' loops
"""
