/* Ownership the kernel keeps (Linux): a side attached with the region's
   descriptor (options.region_fd) holds a lock on one byte of the file,
   which the kernel drops when its process dies. A peer then judges it
   where /proc cannot: across pid namespaces, and under hidepid. Every
   region here is a memfd mapped before the forks. */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAPACITY 4096u
#define PRODUCER_BYTE 640 /* the producer's identity block: its lock's byte */
#define WAIT_NS 150000000u

static shared_ring_shm shm;

static void fresh_region(void) {
    if (shm.region != NULL) shared_ring_shm_close(&shm);
    if (shared_ring_shm_anonymous(&shm, shared_ring_region_size(CAPACITY, 0)) != SHARED_RING_OK)
        abort();
    if (shared_ring_format(shm.region, shm.size, CAPACITY, 0) != SHARED_RING_OK) abort();
}

static shared_ring_options with_fd(void) {
    shared_ring_options o = shared_ring_default_options();
    o.region_fd = shm.fd;
    return o;
}

static int ignore(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return 0;
}

/* Another open file description of the region's file, or -1. */
static int another_description(void) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", shm.fd);
    return open(path, O_RDWR);
}

/* What another open file description of the file finds at `byte`. */
static short lock_seen_at(int byte) {
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };
    int fd = another_description();
    if (fd < 0 || fcntl(fd, F_OFD_GETLK, &fl) != 0) fl.l_type = -1;
    if (fd >= 0) close(fd);
    return fl.l_type;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the descriptor ---------------------------------------------------------- */

TEST(an_attached_side_holds_its_lock_until_it_detaches) {
    shared_ring_producer p;
    shared_ring_options o;
    fresh_region();
    o = with_fd();
    CHECK_EQ(lock_seen_at(PRODUCER_BYTE), F_UNLCK);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(lock_seen_at(PRODUCER_BYTE), F_WRLCK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(lock_seen_at(PRODUCER_BYTE), F_UNLCK);
}

TEST(a_descriptor_of_another_ring_is_refused) {
    shared_ring_producer p;
    shared_ring_shm other;
    shared_ring_options o = shared_ring_default_options();
    fresh_region();
    CHECK_EQ(shared_ring_shm_anonymous(&other, shm.size), SHARED_RING_OK);
    CHECK_EQ(shared_ring_format(other.region, other.size, CAPACITY, 0), SHARED_RING_OK);
    o.region_fd = other.fd; /* a ring of the same size, with another ring id */
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_ERR_ARG);
    CHECK_EQ(lock_seen_at(PRODUCER_BYTE), F_UNLCK);
    o.region_fd = shm.fd;
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    shared_ring_shm_close(&other);
}

TEST(a_descriptor_that_is_not_an_open_regular_file_is_refused) {
    shared_ring_consumer c;
    shared_ring_options o = shared_ring_default_options();
    int fds[2];
    fresh_region();
    CHECK(pipe(fds) == 0);
    o.region_fd = fds[0]; /* a FIFO: reading it would block */
    CHECK_EQ(shared_ring_attach_consumer(&c, shm.region, shm.size, &o), SHARED_RING_ERR_ARG);
    close(fds[0]);
    close(fds[1]);
    o.region_fd = fds[0]; /* closed now */
    CHECK_EQ(shared_ring_attach_consumer(&c, shm.region, shm.size, &o), SHARED_RING_ERR_ARG);
}

TEST(a_lost_handle_taken_back_attaches_without_a_second_lock) {
    shared_ring_producer lost, p;
    shared_ring_options o;
    fresh_region();
    o = with_fd();
    CHECK_EQ(shared_ring_attach_producer(&lost, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_ERR_BUSY);
    o.flags = SHARED_RING_TAKE_BACK;
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&p, "after", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

/* Both sides locked from one process are still one process: the producer
   publishes without a fence (when the kernel has membarrier). */
TEST(two_locked_sides_of_one_process_still_publish_without_a_fence) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_options o;
    uint64_t fenceless_for, consumer_attach_id;
    fresh_region();
    o = with_fd();
    CHECK_EQ(shared_ring_attach_consumer(&c, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(lock_seen_at(768), F_WRLCK);
    memcpy(&fenceless_for, (unsigned char *)shm.region + 536, 8);
    memcpy(&consumer_attach_id, (unsigned char *)shm.region + 776, 8);
    if ((syscall(SYS_membarrier, 0, 0, 0) & (1 << 3)) == 0) /* QUERY: PRIVATE_EXPEDITED? */
        printf("  skipped the fence check: no membarrier here\n");
    else
        CHECK_EQ(fenceless_for, consumer_attach_id);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
}

/* ---- a producer in another pid namespace ------------------------------------- */

/* A grandchild in a new pid namespace (its parent unshared; root, or a
   user namespace) attaches as the producer with the descriptor and
   sleeps. Returns the child (the namespace's parent) or 0 where the
   kernel refuses a pid namespace; *owner is the grandchild's pid as this
   process sees it (the middle's namespace is ours). */
static pid_t producer_in_new_pid_namespace(pid_t *owner, int with_lock) {
    int fds[2], pids[2]; /* the grandchild's word, the middle's */
    char ok = 0;
    pid_t middle;
    if (pipe(fds) != 0 || pipe(pids) != 0) abort();
    middle = harness_fork();
    if (middle == 0) {
        pid_t inner;
        int flags = CLONE_NEWPID | (geteuid() == 0 ? 0 : CLONE_NEWUSER);
        if (unshare(flags) != 0) {
            if (write(fds[1], &ok, 1) != 1) _exit(2);
            _exit(0);
        }
        inner = harness_fork();
        if (inner == 0) {
            shared_ring_producer p;
            shared_ring_options o = with_fd();
            if (!with_lock) o.region_fd = 0;
            ok = shared_ring_attach_producer(&p, shm.region, shm.size, &o) == SHARED_RING_OK ? 1
                                                                                              : 2;
            if (write(fds[1], &ok, 1) != 1) _exit(2);
            for (;;) pause();
        }
        if (write(pids[1], &inner, sizeof inner) != sizeof inner) _exit(2);
        waitpid(inner, NULL, 0);
        _exit(0);
    }
    close(fds[1]);
    close(pids[1]);
    if (read(fds[0], &ok, 1) != 1) ok = 2;
    if (ok == 1 && read(pids[0], owner, sizeof *owner) != sizeof *owner) ok = 2;
    close(fds[0]);
    close(pids[0]);
    if (ok == 0) {
        waitpid(middle, NULL, 0);
        return 0;
    }
    if (ok != 1) abort();
    return middle;
}

/* Kill the producer (init of its namespace) and reap its parent. */
static void kill_namespace(pid_t owner, pid_t middle) {
    kill(owner, SIGKILL);
    waitpid(middle, NULL, 0);
}

TEST(a_live_producer_in_another_pid_namespace_keeps_its_side) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_options o;
    pid_t owner, middle;
    fresh_region();
    o = with_fd();
    middle = producer_in_new_pid_namespace(&owner, 1);
    if (middle == 0) {
        printf("  skipped: this kernel or user may not make a pid namespace\n");
        return;
    }
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_ERR_BUSY);
    CHECK_EQ(shared_ring_attach_consumer(&c, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, WAIT_NS), SHARED_RING_TIMEOUT);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
    kill_namespace(owner, middle);
}

TEST(a_dead_producer_in_another_pid_namespace_is_gone_by_its_lock) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_options o;
    pid_t owner, middle;
    double killed;
    int r;
    fresh_region();
    o = with_fd();
    middle = producer_in_new_pid_namespace(&owner, 1);
    if (middle == 0) {
        printf("  skipped: this kernel or user may not make a pid namespace\n");
        return;
    }
    CHECK_EQ(shared_ring_attach_consumer(&c, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, 0), SHARED_RING_EMPTY);
    kill_namespace(owner, middle);
    killed = now_ms();
    r = shared_ring_read(&c, ignore, NULL, 3000000000u); /* within 100 ms, or TIMEOUT */
    CHECK_EQ(r, SHARED_RING_PEER_GONE);
    if (r == SHARED_RING_PEER_GONE)
        printf("  PEER_GONE %.1f ms after the namespace was reaped\n", now_ms() - killed);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
}

TEST(without_the_descriptor_a_dead_producer_in_another_pid_namespace_counts_alive) {
    shared_ring_producer p;
    pid_t owner, middle;
    fresh_region();
    middle = producer_in_new_pid_namespace(&owner, 0);
    if (middle == 0) {
        printf("  skipped: this kernel or user may not make a pid namespace\n");
        return;
    }
    kill_namespace(owner, middle);
    /* its pid is not ours to look up: the worse case, alive */
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, NULL), SHARED_RING_ERR_BUSY);
}

/* ---- hidepid ----------------------------------------------------------------- */

/* A checker that /proc hides the owner from (a proc mounted with
   hidepid=invisible, another user): root only, to mount and change user.
   Returns the checker's exit status: 0 passed, 77 skipped. */
static int check_under_hidepid(pid_t owner, int (*check)(void)) {
    int status = -1;
    pid_t checker = harness_fork();
    if (checker == 0) {
        char path[64];
        if (unshare(CLONE_NEWNS) != 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            (mount("proc", "/proc", "proc", 0, "hidepid=invisible") != 0 &&
             mount("proc", "/proc", "proc", 0, "hidepid=2") != 0) ||
            setgid(65534) != 0 || setuid(65534) != 0)
            _exit(77);
        snprintf(path, sizeof path, "/proc/%d", (int)owner);
        if (access(path, F_OK) == 0) _exit(77); /* not hidden after all */
        _exit(check());
    }
    if (waitpid(checker, &status, 0) != checker || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

static pid_t producer_attached(int with_lock) {
    harness_teller t;
    pid_t pid = harness_fork_telling(&t);
    if (pid == 0) {
        shared_ring_producer p;
        shared_ring_options o = with_fd();
        if (!with_lock) o.region_fd = 0;
        harness_tell(&t, shared_ring_attach_producer(&p, shm.region, shm.size, &o) == SHARED_RING_OK);
        for (;;) pause();
    }
    if (!harness_told_ok(&t)) abort();
    return pid;
}

static int hidden_producer_counts_alive(int with_lock) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_options o = with_fd();
    if (!with_lock) o.region_fd = 0;
    if (shared_ring_attach_producer(&p, shm.region, shm.size, &o) != SHARED_RING_ERR_BUSY) return 3;
    if (shared_ring_attach_consumer(&c, shm.region, shm.size, &o) != SHARED_RING_OK) return 4;
    return shared_ring_read(&c, ignore, NULL, WAIT_NS) == SHARED_RING_TIMEOUT ? 0 : 5;
}
static int hidden_alive_with_lock(void) { return hidden_producer_counts_alive(1); }
static int hidden_alive_without_lock(void) { return hidden_producer_counts_alive(0); }

static void hidepid_case(int with_lock) {
    pid_t owner;
    int r;
    if (geteuid() != 0) {
        printf("  skipped: needs root to mount proc with hidepid and change user\n");
        return;
    }
    fresh_region();
    owner = producer_attached(with_lock);
    r = check_under_hidepid(owner, with_lock ? hidden_alive_with_lock : hidden_alive_without_lock);
    kill(owner, SIGKILL);
    waitpid(owner, NULL, 0);
    if (r == 77) {
        printf("  skipped: could not mount proc with hidepid here\n");
        return;
    }
    CHECK_EQ(r, 0);
}

TEST(a_producer_that_hidepid_hides_counts_alive) { hidepid_case(0); }
TEST(a_locked_producer_that_hidepid_hides_counts_alive) { hidepid_case(1); }



/* A descriptor of another file judges nothing: its byte is free, but the
   live holder's lock is on the ring's own file. The attach is refused
   (ERR_BUSY: the holder lives) and the holder keeps its word. */
TEST(a_descriptor_of_another_file_never_judges_a_live_locked_holder_gone) {
    shared_ring_producer p;
    shared_ring_shm other;
    shared_ring_options o = shared_ring_default_options();
    uint64_t before, after;
    pid_t kid;
    fresh_region();
    CHECK_EQ(shared_ring_shm_anonymous(&other, shm.size), SHARED_RING_OK);
    CHECK_EQ(shared_ring_format(other.region, other.size, CAPACITY, 0), SHARED_RING_OK);
    kid = producer_attached(1);
    memcpy(&before, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    o.region_fd = other.fd;
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_ERR_BUSY);
    memcpy(&after, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    CHECK_EQ(after, before);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    shared_ring_shm_close(&other);
}


/* A region_fd of a copy of the ring's file (the same ring id) would lock a
   byte of the copy: the claim finds its own word missing there, gives the
   side back and says ERR_ARG; so does prepare. */
TEST(a_descriptor_of_a_copy_of_the_file_is_refused_and_takes_nothing) {
    shared_ring_producer p;
    shared_ring_options o = shared_ring_default_options();
    int copy = memfd_create("copy", MFD_CLOEXEC);
    uint64_t word;
    fresh_region();
    CHECK(copy >= 0 && write(copy, shm.region, shm.size) == (ssize_t)shm.size);
    o.region_fd = copy;
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_ERR_ARG);
    memcpy(&word, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    CHECK_EQ(word, 0);
    CHECK_EQ(shared_ring_prepare(shm.region, shm.size, CAPACITY, 0, copy), SHARED_RING_ERR_ARG);
    memcpy(&word, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    CHECK_EQ(word, 0);
    close(copy);
}

/* A side taken back in this process, then detached: the lost handle's
   description still holds the byte over the FREE word, but this process
   (the side's last holder, its slot says) attaches again. */
TEST(a_side_taken_back_and_detached_can_be_attached_again_by_this_process) {
    shared_ring_producer lost, back, again;
    shared_ring_options o;
    fresh_region();
    o = with_fd();
    CHECK_EQ(shared_ring_attach_producer(&lost, shm.region, shm.size, &o), SHARED_RING_OK);
    o.flags = SHARED_RING_TAKE_BACK;
    CHECK_EQ(shared_ring_attach_producer(&back, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&back), SHARED_RING_OK);
    o.flags = 0;
    CHECK_EQ(shared_ring_attach_producer(&again, shm.region, shm.size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&again), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&lost), SHARED_RING_OK); /* only dropped: its side was lost */
}

/* ---- the lock before the word ------------------------------------------------- */

/* Another description of the file, holding the lock on `byte` (what a
   process between its lock and its claim, or a prepare, holds). */
static int hold_byte(int byte) {
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };
    int fd = another_description();
    if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) != 0) abort();
    return fd;
}

/* A byte held while the word is still FREE is a claim (or a prepare) in
   progress: attach says NOT_FORMATTED (its _wait form retries) and takes
   nothing; once the byte is let go it attaches, LOCKED. */
TEST(an_attach_while_another_holds_the_sides_byte_over_a_free_word_takes_nothing) {
    shared_ring_producer p = { 0 };
    shared_ring_options o;
    uint64_t word;
    int held;
    fresh_region();
    o = with_fd();
    held = hold_byte(PRODUCER_BYTE);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_NOT_FORMATTED);
    memcpy(&word, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    CHECK_EQ(word, 0); /* still FREE */
    close(held);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    memcpy(&word, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    CHECK(word & SRNG_OWNER_LOCKED);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

/* A producer whose lock lives on in a description its forked child
   inherited, killed: the byte stays held, but its pid says it died, so
   the side is taken over (without LOCKED: the lock is the child's). */
TEST(a_dead_holder_whose_child_keeps_its_lock_is_judged_by_its_pid) {
    shared_ring_producer p;
    shared_ring_options o;
    int fds[2];
    pid_t holder, child = 0;
    uint64_t word;
    fresh_region();
    o = with_fd();
    if (pipe(fds) != 0) abort();
    holder = harness_fork();
    if (holder == 0) {
        pid_t kid;
        if (shared_ring_attach_producer(&p, shm.region, shm.size, &o) != SHARED_RING_OK) _exit(1);
        kid = harness_fork(); /* inherits the lock's description, never adopts */
        if (kid == 0) {
            for (;;) pause();
        }
        if (write(fds[1], &kid, sizeof kid) != sizeof kid) _exit(2);
        for (;;) pause();
    }
    CHECK(read(fds[0], &child, sizeof child) == sizeof child);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    CHECK_EQ(lock_seen_at(PRODUCER_BYTE), F_WRLCK); /* the child keeps it */
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK);
    memcpy(&word, (unsigned char *)shm.region + PRODUCER_BYTE, 8);
    CHECK_EQ(word & SRNG_OWNER_LOCKED, 0);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    if (child > 0) kill(child, SIGKILL);
    close(fds[0]);
    close(fds[1]);
}

/* An attach without the file cannot test anyone's byte: a live locked
   side in another process is never taken from it. */
TEST(an_attach_without_the_file_never_takes_a_live_locked_side) {
    shared_ring_producer p;
    shared_ring_options o;
    int fds[2];
    char ok = 0;
    pid_t kid;
    fresh_region();
    o = with_fd();
    if (pipe(fds) != 0) abort();
    kid = harness_fork();
    if (kid == 0) {
        ok = shared_ring_attach_producer(&p, shm.region, shm.size, &o) == SHARED_RING_OK;
        if (write(fds[1], &ok, 1) != 1) _exit(2);
        for (;;) pause();
    }
    CHECK(read(fds[0], &ok, 1) == 1 && ok);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, NULL), SHARED_RING_ERR_BUSY);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, &o), SHARED_RING_OK); /* gone now */
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    close(fds[0]);
    close(fds[1]);
}

int main(void) {
    alarm(120);
    setvbuf(stdout, NULL, _IONBF, 0);
    RUN(a_descriptor_of_a_copy_of_the_file_is_refused_and_takes_nothing);
    RUN(a_side_taken_back_and_detached_can_be_attached_again_by_this_process);
    RUN(a_descriptor_of_another_file_never_judges_a_live_locked_holder_gone);
    RUN(an_attach_while_another_holds_the_sides_byte_over_a_free_word_takes_nothing);
    RUN(a_dead_holder_whose_child_keeps_its_lock_is_judged_by_its_pid);
    RUN(an_attach_without_the_file_never_takes_a_live_locked_side);
    RUN(an_attached_side_holds_its_lock_until_it_detaches);
    RUN(a_descriptor_of_another_ring_is_refused);
    RUN(a_descriptor_that_is_not_an_open_regular_file_is_refused);
    RUN(a_lost_handle_taken_back_attaches_without_a_second_lock);
    RUN(two_locked_sides_of_one_process_still_publish_without_a_fence);
    RUN(a_live_producer_in_another_pid_namespace_keeps_its_side);
    RUN(a_dead_producer_in_another_pid_namespace_is_gone_by_its_lock);
    RUN(without_the_descriptor_a_dead_producer_in_another_pid_namespace_counts_alive);
    RUN(a_producer_that_hidepid_hides_counts_alive);
    RUN(a_locked_producer_that_hidepid_hides_counts_alive);
    return harness_summary("kernel_lock");
}
