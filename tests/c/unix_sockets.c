/* AF_UNIX sockets reached by address: every way libc (and syscall(2)) lets
 * a program connect or send to one.
 * Usage: unix_sockets MODE NAME [NAME...]. NAME is a socket path, or
 * @NAME for an abstract socket. MODE is connect, sys_connect,
 * alias_connect (glibc's __connect), sendto, sys_sendto, sendmsg,
 * sys_sendmsg, sendmmsg or sys_sendmmsg (one datagram to each NAME, in one
 * call), or bind. Prints "MODE RET ERRNO"; after a connect that worked,
 * "MODE got DATA" with what the listener sent; after a sendmmsg, each
 * message's msg_len ("MODE msg_len N"). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

extern int __connect(int, const struct sockaddr *, socklen_t);

static socklen_t address(const char *name, struct sockaddr_un *a) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (name[0] == '@') {
        /* Abstract: a leading NUL, the name, no terminating NUL. */
        strncpy(a->sun_path + 1, name + 1, sizeof a->sun_path - 2);
        return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name + 1);
    }
    strncpy(a->sun_path, name, sizeof a->sun_path - 1);
    return sizeof *a;
}

static int report(const char *mode, long r) {
    printf("%s %ld %d\n", mode, r < 0 ? -1L : r, r < 0 ? errno : 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 10) {
        fprintf(stderr, "usage: unix_sockets MODE NAME [NAME...]\n");
        return 2;
    }
    const char *mode = argv[1];
    struct sockaddr_un a;
    socklen_t len = address(argv[2], &a);
    int stream = !strstr(mode, "send");
    int s = socket(AF_UNIX, stream ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (s < 0) {
        perror("socket");
        return 2;
    }
    const struct sockaddr *sa = (const struct sockaddr *)&a;
    long r;
    errno = 0;
    if (!strcmp(mode, "connect"))
        r = connect(s, sa, len);
    else if (!strcmp(mode, "sys_connect"))
        r = syscall(SYS_connect, s, sa, len);
    else if (!strcmp(mode, "alias_connect"))
        r = __connect(s, sa, len);
    else if (!strcmp(mode, "bind"))
        r = bind(s, sa, len);
    else if (!strcmp(mode, "sendto"))
        r = sendto(s, "MSG-sendto", 10, 0, sa, len);
    else if (!strcmp(mode, "sys_sendto"))
        r = syscall(SYS_sendto, s, "MSG-sys_sendto", 14, 0, sa, len);
    else if (!strcmp(mode, "sendmsg") || !strcmp(mode, "sys_sendmsg")) {
        char *msg = mode[1] == 'y' ? "MSG-sys_sendmsg" : "MSG-sendmsg";
        struct iovec iov = {msg, strlen(msg)};
        struct msghdr m = {.msg_name = &a, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
        r = mode[1] == 'y' ? syscall(SYS_sendmsg, s, &m, 0) : sendmsg(s, &m, 0);
    } else if (!strcmp(mode, "sendmmsg") || !strcmp(mode, "sys_sendmmsg")) {
        struct iovec iov = {"MSG-sendmmsg", 12};
        struct sockaddr_un names[8];
        struct mmsghdr v[8];
        unsigned n = argc - 2;
        memset(v, 0, sizeof v);
        for (unsigned i = 0; i < n; i++) {
            v[i].msg_hdr.msg_name = &names[i];
            v[i].msg_hdr.msg_namelen = address(argv[2 + i], &names[i]);
            v[i].msg_hdr.msg_iov = &iov;
            v[i].msg_hdr.msg_iovlen = 1;
            v[i].msg_len = 12345;
        }
        r = mode[1] == 'y' ? syscall(SYS_sendmmsg, s, v, n, 0) : sendmmsg(s, v, n, 0);
        int e = errno;
        for (unsigned i = 0; i < n; i++)
            printf("%s msg_len %u\n", mode, v[i].msg_len);
        errno = e;
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    report(mode, r);
    if (r == 0 && stream && strcmp(mode, "bind")) {
        char buf[64] = {0};
        ssize_t n = read(s, buf, sizeof buf - 1);
        printf("%s got %s\n", mode, n > 0 ? buf : "");
    }
    return 0;
}
