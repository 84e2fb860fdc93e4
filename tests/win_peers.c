/* Peers in other processes on Windows (run under wine by make matrix): a
   named file mapping shared with a child process of this program, which
   attaches as one side and waits to be terminated. TerminateProcess is
   Windows' SIGKILL. Usage: win_peers (the child is run as
   "win_peers child producer|consumer NAME"). */
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

#define CAPACITY 4096u
/* margin: PEER_GONE within the 50 ms liveness interval; 1 s allowed (20x),
   under wine too: the interval is a timed sleep */
#define GONE_BOUND_MS 1000.0

static char self_path[MAX_PATH];
static char name[64];
static shared_ring_shm shm;

static double now_ms(void) {
    LARGE_INTEGER f, t;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&t);
    return (double)t.QuadPart * 1e3 / (double)f.QuadPart;
}

/* The child: attach as one side, tell the parent (exit code of a failed
   attach otherwise), sleep until terminated. */
static int child(const char *side, const char *ring) {
    shared_ring_shm m;
    shared_ring_producer p;
    shared_ring_consumer c;
    int r = shared_ring_shm_open(&m, ring, 0, 5000000000u);
    if (r != SHARED_RING_OK) return 10;
    r = strcmp(side, "producer") == 0 ? shared_ring_attach_producer(&p, m.region, m.size, NULL)
                                      : shared_ring_attach_consumer(&c, m.region, m.size, NULL);
    if (r != SHARED_RING_OK) return 11;
    printf("attached\n");
    fflush(stdout);
    Sleep(INFINITE);
    return 0;
}

static void fresh_ring(int round) {
    if (shm.region != NULL) shared_ring_shm_close(&shm);
    snprintf(name, sizeof name, "Local\\shared_ring_win_peers_%lu_%d",
             (unsigned long)GetCurrentProcessId(), round);
    if (shared_ring_shm_open(&shm, name, shared_ring_region_size(CAPACITY, 0), 0) != 0) abort();
    if (shared_ring_format(shm.region, shm.size, CAPACITY, 0) != 0) abort();
}

/* Start a child attached as `side`; wait until its attach returned (it says
   "attached" on its stdout, a pipe): owners_of shows its pid from its claim
   on, and a kill before the attach returns leaves no peer to hear of. */
static HANDLE start_child(const char *side) {
    char cmd[MAX_PATH + 128], said[16] = "";
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    SECURITY_ATTRIBUTES sa;
    HANDLE out_r, out_w;
    DWORD got = 0, n;
    int i;
    sa.nLength = sizeof sa;
    sa.lpSecurityDescriptor = NULL;
    sa.bInheritHandle = TRUE;
    if (!CreatePipe(&out_r, &out_w, &sa, 0)) abort();
    SetHandleInformation(out_r, HANDLE_FLAG_INHERIT, 0); /* the child gets the write end only */
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdOutput = out_w;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    snprintf(cmd, sizeof cmd, "\"%s\" child %s %s", self_path, side, name);
    if (!CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) abort();
    CloseHandle(pi.hThread);
    CloseHandle(out_w); /* a child that exits without a word breaks the pipe */
    for (i = 0; i < 10000 && got < 8; i++) { /* up to about 10 s: a stuck child fails the run */
        DWORD avail = 0;
        if (!PeekNamedPipe(out_r, NULL, 0, NULL, &avail, NULL)) break;
        if (avail == 0) {
            Sleep(1);
            continue;
        }
        if (!ReadFile(out_r, said + got, 8 - got, &n, NULL)) break;
        got += n;
    }
    CloseHandle(out_r);
    if (strncmp(said, "attached", 8) != 0) {
        DWORD code = 0;
        GetExitCodeProcess(pi.hProcess, &code);
        fprintf(stderr, "win_peers: the %s child did not attach (exit code %lu)\n", side,
                (unsigned long)code);
        abort();
    }
    return pi.hProcess;
}

typedef struct killer {
    HANDLE victim;
    double killed_at;
} killer;

static DWORD WINAPI terminate_later(LPVOID arg) {
    killer *k = (killer *)arg;
    Sleep(230);
    k->killed_at = now_ms();
    TerminateProcess(k->victim, 9);
    return 0;
}

static int ignore(void *user, const void *data, size_t len) {
    (void)user, (void)data, (void)len;
    return 0;
}

TEST(consumer_waiting_forever_hears_peer_gone_when_the_producer_is_terminated) {
    shared_ring_consumer c;
    killer k;
    HANDLE t;
    double took;
    int r;
    fresh_ring(1);
    k.victim = start_child("producer");
    CHECK_EQ(shared_ring_attach_consumer(&c, shm.region, shm.size, NULL), SHARED_RING_OK);
    t = CreateThread(NULL, 0, terminate_later, &k, 0, NULL);
    r = shared_ring_read(&c, ignore, NULL, SHARED_RING_FOREVER);
    took = now_ms() - k.killed_at;
    WaitForSingleObject(t, INFINITE);
    CHECK_EQ(r, SHARED_RING_PEER_GONE);
    CHECK(took < GONE_BOUND_MS);
    printf("  producer terminated: the consumer heard PEER_GONE after %.1f ms\n", took);
    CloseHandle(t);
    CloseHandle(k.victim);
}

TEST(producer_blocked_on_a_full_ring_hears_peer_gone_when_the_consumer_is_terminated) {
    shared_ring_producer p;
    char buf[64] = { 0 };
    killer k;
    HANDLE t;
    double took;
    int r;
    fresh_ring(2);
    k.victim = start_child("consumer");
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, NULL), SHARED_RING_OK);
    while (shared_ring_write_bytes(&p, buf, sizeof buf, 0) == SHARED_RING_OK) {
    }
    t = CreateThread(NULL, 0, terminate_later, &k, 0, NULL);
    r = shared_ring_write_bytes(&p, buf, sizeof buf, SHARED_RING_FOREVER);
    took = now_ms() - k.killed_at;
    WaitForSingleObject(t, INFINITE);
    CHECK_EQ(r, SHARED_RING_PEER_GONE);
    CHECK(took < GONE_BOUND_MS);
    printf("  consumer terminated: the blocked producer heard PEER_GONE after %.1f ms\n", took);
    CloseHandle(t);
    CloseHandle(k.victim);
}

TEST(second_producer_while_the_first_process_lives_gets_busy_and_takes_over_once_it_is_gone) {
    shared_ring_producer p;
    HANDLE first;
    fresh_ring(3);
    first = start_child("producer");
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, NULL), SHARED_RING_ERR_BUSY);
    TerminateProcess(first, 9);
    WaitForSingleObject(first, INFINITE);
    CHECK_EQ(shared_ring_attach_producer(&p, shm.region, shm.size, NULL), SHARED_RING_OK);
    CloseHandle(first);
}

TEST(a_named_mapping_opened_by_name_is_the_same_memory) {
    shared_ring_shm other;
    fresh_ring(4);
    CHECK_EQ(shared_ring_shm_open(&other, name, 0, 0), SHARED_RING_OK);
    CHECK(other.size >= shm.size);
    CHECK_EQ(other.created, 0);
    CHECK_EQ(shared_ring_prepare(other.region, other.size, CAPACITY, 0, other.fd), SHARED_RING_OK);
    shared_ring_owners o1, o2;
    shared_ring_owners_of(shm.region, shm.size, shm.fd, &o1);
    shared_ring_owners_of(other.region, other.size, other.fd, &o2);
    CHECK(o1.ring_id == o2.ring_id && o1.ring_id != 0);
    CHECK_EQ(shared_ring_shm_close(&other), SHARED_RING_OK);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);
    if (GetModuleFileNameA(NULL, self_path, sizeof self_path) == 0) return 2;
    RUN(consumer_waiting_forever_hears_peer_gone_when_the_producer_is_terminated);
    RUN(producer_blocked_on_a_full_ring_hears_peer_gone_when_the_consumer_is_terminated);
    RUN(second_producer_while_the_first_process_lives_gets_busy_and_takes_over_once_it_is_gone);
    RUN(a_named_mapping_opened_by_name_is_the_same_memory);
    return harness_summary("windows peers");
}
