// Shared by the tests that check a process dies (the default contract handler aborts, the fuzz
// entry point traps): run `body` in a forked child with its stderr captured.
#pragma once

#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace test_support {

struct child_end {
    bool signaled = false; ///< the child was killed by a signal (did not return from body)
    int signal = 0;        ///< which one
    std::string stderr_text;
};

/// Run body() in a forked child (stderr to a pipe, then _exit(0) if body returns).
template <class Body>
child_end run_in_child(Body body) {
    child_end end;
    int fds[2];
    if (pipe(fds) != 0) return end;
    const pid_t pid = fork();
    if (pid < 0) return end;
    if (pid == 0) {
        dup2(fds[1], 2);
        body();
        _exit(0);
    }
    close(fds[1]);
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
        end.stderr_text.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    end.signaled = WIFSIGNALED(status);
    if (end.signaled) end.signal = WTERMSIG(status);
    return end;
}

} // namespace test_support
