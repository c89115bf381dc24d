"""Run jobs through an asyncio worker pool.

    python3 pipeline.py JOBS_FILE WORKERS

JOBS_FILE has one job per line: `<id> <n>` (id: integer, n: integer). Processing job n means
computing the sum of the decimal digits of n**n; n < 0 is invalid and the job fails.
WORKERS coroutines (WORKERS >= 1) take jobs from a bounded queue (size 8) fed by one producer.
Prints one line per job, ordered by id ascending (numerically):
    <id> <digit sum>      or      <id> error
then a final line `done <number of ok jobs> ok <number of failed jobs> failed`.
"""
import asyncio
import sys


async def process(n):
    if n < 0:
        raise ValueError(f"negative n: {n}")
    await asyncio.sleep(0.001)   # stands for real I/O
    return sum(int(d) for d in str(n ** n))


async def producer(queue, jobs):
    for job in jobs:
        await queue.put(job)
    await queue.put(None)


async def worker(queue, results):
    while True:
        job = await queue.get()
        if job is None:
            queue.task_done()
            return
        job_id, n = job
        results.append((job_id, await process(n)))
        queue.task_done()


async def main(path, nworkers):
    jobs = []
    for line in open(path):
        if line.strip():
            a, b = line.split()
            jobs.append((a, int(b)))
    queue = asyncio.Queue(maxsize=8)
    results = []
    workers = [asyncio.create_task(worker(queue, results)) for _ in range(nworkers)]
    await producer(queue, jobs)
    await queue.join()
    await asyncio.gather(*workers)
    ok = failed = 0
    for job_id, value in sorted(results):
        print(job_id, value)
        ok += 1
    print(f"done {ok} ok {failed} failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
