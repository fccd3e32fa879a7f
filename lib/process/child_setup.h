/* A child's set-up between fork and exec: the one copy, plain C, shared by the C++ spawner
 * (process_spawn.cpp, in the initializer Boost.Process's launcher calls in the child), pid 1 of
 * emurun's namespaces (namespaces.cpp) and the static step supervisor
 * (tools/emurun-supervisor, musl or glibc). Everything here is async-signal-safe and allocates
 * nothing: it runs in a child forked from a process that may have threads. */
#ifndef EMURUN_PROCESS_CHILD_SETUP_H
#define EMURUN_PROCESS_CHILD_SETUP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Which step of starting a child failed. lib/process's ExecStage takes these values, and the
 * supervisor reports them ("E <stage> <errno>"): they are part of both encodings. */
enum ecs_stage {
    ecs_stage_setpgid = 1,
    ecs_stage_dup2 = 2,
    ecs_stage_chdir = 3,
    ecs_stage_execve = 4,
    ecs_stage_prctl = 5,
    ecs_stage_fork = 6,
    ecs_stage_setup = 7,  /* before fork: pipes, memory, a request that makes no sense */
    ecs_stage_limits = 8, /* joining the child's cgroups, setting its rlimits */
};

/* What the child does before its exec, in this order: default signals and an empty mask
 * (always), PR_SET_PDEATHSIG, its own process group, its stdio, its working directory, and
 * every descriptor above 2 closed but those in `keep`. */
struct ecs_child {
    int parent_death_signal; /* PR_SET_PDEATHSIG; 0 = none */
    int new_process_group;   /* setpgid(0, 0): the child leads its own group */
    int stdio[3];            /* dup2'd onto 0, 1, 2 (any descriptor, one for two too); -1: absent */
    int close_absent;        /* an absent one: 1 = closed, 0 = inherited */
    const char* cwd;         /* chdir here; NULL or "" = stay */
    const int* keep;         /* descriptors above 2 that stay open (an error pipe) */
    int n_keep;
};

/* Every signal's disposition back to SIG_DFL (glibc's reserved ones too, through the kernel:
 * glibc refuses sigaction() for them), then an empty signal mask. Dispositions first: a pending
 * signal must not reach the parent's handlers. */
void ecs_default_signals(void);

/* Close descriptors from..to (inclusive): close_range, or one by one below RLIMIT_NOFILE where
 * the kernel has none (< 5.9). */
void ecs_close_range(unsigned from, unsigned to);

/* The set-up `child` asks for. 0 when done, else the ecs_stage that failed, errno set. */
int ecs_setup_child(const struct ecs_child* child);

#ifdef __cplusplus
}
#endif

#endif
