"""Build a /proc-like fixture: PROCDIR/<pid>/{status,limits,fd/<n>}."""
import os

LIMITS = """Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max file size             unlimited            unlimited            bytes     
Max data size             unlimited            unlimited            bytes     
Max stack size            8388608              unlimited            bytes     
Max core file size        0                    unlimited            bytes     
Max resident set          unlimited            unlimited            bytes     
Max processes             63408                63408                processes 
Max open files            {soft:<20} {hard:<20} files     
Max locked memory         8388608              8388608              bytes     
Max address space         unlimited            unlimited            bytes     
Max file locks            unlimited            unlimited            locks     
Max pending signals       63408                63408                signals   
Max msgqueue size         819200               819200               bytes     
Max nice priority         0                    0                    
Max realtime priority     0                    0                    
Max realtime timeout      unlimited            unlimited            us        
"""


def make(root, procs):
    """procs: list of (pid, name, uid, soft, hard, n_open)."""
    for pid, name, uid, soft, hard, n_open in procs:
        d = os.path.join(root, str(pid))
        os.makedirs(os.path.join(d, "fd"))
        with open(os.path.join(d, "status"), "w") as f:
            f.write(f"Name:\t{name}\nState:\tS (sleeping)\nPid:\t{pid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
        with open(os.path.join(d, "limits"), "w") as f:
            f.write(LIMITS.format(soft=soft, hard=hard))
        for i in range(n_open):
            open(os.path.join(d, "fd", str(i)), "w").close()


if __name__ == "__main__":
    make("/app/proc", [(101, "nginx", 33, 1024, 4096, 900), (202, "postgres", 999, 1024, 1024, 100),
                       (303, "java", 1000, 4096, 4096, 4000), (404, "sshd", 0, "unlimited", "unlimited", 50),
                       (505, "redis-server", 999, 100, 200, 80)])
