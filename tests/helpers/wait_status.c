/* wait_status PROGRAM [ARGS...]: run PROGRAM (execvp) and print how it ended, as its parent
 * sees it: "exited N" or "signaled N" (WTERMSIG). Tells a real death by signal apart from an
 * exit with code 128+N, which a shell's $? cannot. Exits 0 unless it could not run PROGRAM. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: wait_status PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("execvp");
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) {
        perror("waitpid");
        return 2;
    }
    if (WIFSIGNALED(status)) {
        printf("signaled %d\n", WTERMSIG(status));
    } else {
        printf("exited %d\n", WEXITSTATUS(status));
    }
    return 0;
}
