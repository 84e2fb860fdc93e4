/* shared_ring_stat: look at a live ring from outside.

   usage: shared_ring_stat PATH|NAME [--json] [--watch SECONDS]

   PATH is a file holding a ring region (a file-backed mapping, or
   /dev/shm/NAME for shm_open); NAME (or /NAME, as given to shm_open) is
   looked up in /dev/shm when no such file exists. It opens without
   following a symbolic link and without blocking, and reads only a
   regular file (a FIFO in a world-writable /dev/shm cannot hang it). Prints the layout version, capacity, max
   message, both positions, fill, the closed and corrupt flags, the ring
   id, each side's process id and whether it is alive, who sleeps and how
   each side sleeps and wakes (or that it is not attached); with --watch,
   one sample every SECONDS, each stamped with the UTC time, with the
   message and byte rates since the last one, until interrupted. Between
   samples it follows write_pos every 100 us, so messages are counted even
   when the ring laps between two samples (unless it laps within 100 us).
   --json prints one object per sample.

   It maps the file read-only and trusts nothing in it: every word is read
   once and checked, record walks stay inside the data area, and a file
   that shrinks under it is reported, not a crash. Exit status: 0 for a
   valid ring, 1 for a file that is not one (the message says why), 2 for
   a usage or system error. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION /* for shared_ring_owners_of: who is attached, alive */
#include "../shared_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Offsets of layout 4 (shared_ring.h, manual section 3). */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_CAPACITY = 8,
    OFF_MAX_MESSAGE = 16,
    OFF_DATA_OFFSET = 20,
    OFF_WRITE_POS = 128,
    OFF_READ_POS = 256,
    OFF_CORRUPT = 264,
    OFF_CONSUMER_SLEEPING = 384,
    OFF_CONSUMER_WAIT_MODE = 392,
    OFF_CONSUMER_FENCELESS_FOR = 408,
    OFF_PRODUCER_SLEEPING = 512,
    OFF_PRODUCER_WAIT_MODE = 520,
    OFF_CLOSED = 524,
    OFF_PRODUCER_WAKE_POS = 528,
    OFF_PRODUCER_FENCELESS_FOR = 536
};

static sigjmp_buf shrank;
static void on_sigbus(int sig) {
    (void)sig;
    siglongjmp(shrank, 1);
}

static const unsigned char *region;
static size_t region_size;

/* Each word is read once into a local and only the local is checked and
   used: the peer may be writing. */
static uint64_t u64_at(size_t off) {
    uint64_t v;
    memcpy(&v, (const void *)(region + off), sizeof v);
    return v;
}
static uint32_t u32_at(size_t off) {
    uint32_t v;
    memcpy(&v, (const void *)(region + off), sizeof v);
    return v;
}

typedef struct sample {
    uint32_t version, max_message, closed, corrupt;
    uint32_t sleeping[2], wait_mode[2]; /* [0] producer, [1] consumer */
    uint64_t fenceless_for[2];
    uint64_t capacity, write_pos, read_pos, wake_pos;
    shared_ring_owners owners;
    double at;    /* seconds, monotonic */
    char utc[40]; /* when, as 2026-01-31T23:59:59.123Z */
} sample;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void stamp_utc(char *out, size_t size) {
    struct timespec ts;
    struct tm tm;
    char day[24];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%.19s.%03uZ", day, (unsigned)(ts.tv_nsec / 1000000L) % 1000u);
}

/* Read and check the header. NULL when valid, else why not. */
static int ring_fd; /* the ring's file, open while we watch */

static const char *take_sample(sample *s) {
    uint64_t cap;
    if (region_size < SHARED_RING_HEADER_SIZE)
        return "smaller than a shared_ring header (1024 bytes)";
    if (u32_at(OFF_MAGIC) == 0) return "not formatted (magic 0), as the library would say";
    if (u32_at(OFF_MAGIC) != SHARED_RING_MAGIC) return "not a shared_ring region (bad magic)";
    s->version = u32_at(OFF_VERSION);
    if (s->version != SHARED_RING_LAYOUT_VERSION) return "a layout version this tool does not read";
    cap = u64_at(OFF_CAPACITY);
    if (cap < 64 || (cap & (cap - 1)) != 0 || cap > region_size - SHARED_RING_HEADER_SIZE)
        return "capacity is not a power of two that fits in the file";
    s->capacity = cap;
    s->max_message = u32_at(OFF_MAX_MESSAGE);
    if (s->max_message > cap / 2 - 8) return "max_message is larger than the capacity allows";
    if (u32_at(OFF_DATA_OFFSET) != SHARED_RING_HEADER_SIZE) return "bad data offset";
    s->write_pos = u64_at(OFF_WRITE_POS);
    s->read_pos = u64_at(OFF_READ_POS);
    s->corrupt = u32_at(OFF_CORRUPT);
    s->closed = u32_at(OFF_CLOSED);
    s->sleeping[0] = u32_at(OFF_PRODUCER_SLEEPING);
    s->sleeping[1] = u32_at(OFF_CONSUMER_SLEEPING);
    s->fenceless_for[0] = u64_at(OFF_PRODUCER_FENCELESS_FOR);
    s->fenceless_for[1] = u64_at(OFF_CONSUMER_FENCELESS_FOR);
    s->wait_mode[0] = u32_at(OFF_PRODUCER_WAIT_MODE);
    s->wait_mode[1] = u32_at(OFF_CONSUMER_WAIT_MODE);
    s->wake_pos = u64_at(OFF_PRODUCER_WAKE_POS);
    if (shared_ring_owners_of(region, region_size, ring_fd, &s->owners) != SHARED_RING_OK)
        return "the header changed while it was read";
    s->at = now_s();
    stamp_utc(s->utc, sizeof s->utc);
    return NULL;
}

/* Bytes between the positions, or -1 if they are not consistent. */
static long long fill_bytes(const sample *s) {
    if (((s->read_pos | s->write_pos) & 7) != 0) return -1;
    if (s->write_pos < s->read_pos) return 0; /* write_pos lags by a record: "about empty" */
    if (s->write_pos - s->read_pos > s->capacity) return -1;
    return (long long)(s->write_pos - s->read_pos);
}

/* Messages published in [from, to): walk the record headers, each checked
   (tag, length) and kept inside the data area. -1 if they cannot be
   counted (more than a lap passed, or the records say otherwise). */
static long long count_records(const sample *s, uint64_t from, uint64_t to) {
    long long n = 0;
    uint64_t pos = from, mask = s->capacity - 1;
    if (to < from || to - from > s->capacity) return -1;
    while (pos < to) {
        uint64_t off = pos & mask, h = u64_at(SHARED_RING_HEADER_SIZE + off), rec;
        uint32_t len = (uint32_t)h;
        if ((uint32_t)(h >> 32) != ((uint32_t)pos | 1u)) return -1;
        if (len == 0xFFFFFFFFu) { /* padding to the end of the lap */
            if (off == 0) return -1;
            rec = s->capacity - off;
        } else if (len >= 0xFFFFFFF1u && len <= 0xFFFFFFF7u) { /* an aligned claim's filler */
            rec = (uint64_t)(len & 7u) * 8u;
            if (rec >= s->capacity - off) return -1;
        } else {
            if (len > s->max_message) return -1;
            rec = 8 + ((len + 7u) & ~7u);
            if (rec > s->capacity - off) return -1;
            n++;
        }
        pos += rec;
    }
    return pos == to ? n : -1;
}

static const char *kind_name(uint32_t mode) {
    static const char *const names[] = { "spins or naps", "futex", "ulock", "WaitOnAddress",
                                         "wait hook" };
    uint32_t kind = mode & 0xFFu;
    return kind < 5 ? names[kind] : "unknown";
}

static const char *alive_name(const shared_ring_owner *o) {
    if (o->pid == 0) return "nobody attached";
    return o->alive == 1 ? "alive" : o->alive == 0 ? "gone" : "cannot tell";
}

/* One reading of a side's sleeping word for the text and the JSON alike:
   1 asleep, 0 and 2 (just attached, look at me) awake; nothing for a side
   nobody is attached as (its words are left from before). */
static const shared_ring_owner *side_owner(const sample *s, int i) {
    return i == 0 ? &s->owners.producer : &s->owners.consumer;
}
static int attached(const sample *s, int i) { return side_owner(s, i)->pid != 0; }
static int asleep(const sample *s, int i) { return attached(s, i) && s->sleeping[i] == 1; }

static const char *json_asleep(const sample *s, int i) {
    if (!attached(s, i)) return "null";
    return asleep(s, i) ? "true" : "false";
}
static const char *json_sleeps_with(const sample *s, int i, char *buf, size_t size) {
    if (!attached(s, i)) return "null";
    snprintf(buf, size, "\"%s\"", kind_name(s->wait_mode[i]));
    return buf;
}

static void print_text(const sample *s, const sample *prev, long long msgs) {
    long long fill = fill_bytes(s);
    int i;
    if (prev != NULL) printf("time             %s\n", s->utc);
    printf("layout version   %u\n", s->version);
    printf("capacity         %llu bytes\n", (unsigned long long)s->capacity);
    printf("max message      %u bytes\n", s->max_message);
    printf("write_pos        %llu\n", (unsigned long long)s->write_pos);
    printf("read_pos         %llu\n", (unsigned long long)s->read_pos);
    if (fill < 0)
        printf("fill             positions inconsistent\n");
    else
        printf("fill             %lld bytes (%.1f%%)\n", fill,
               100.0 * (double)fill / (double)s->capacity);
    printf("closed           %s\n", s->closed ? "yes" : "no");
    printf("corrupt          %s\n", s->corrupt ? "yes (the consumer found bad data)" : "no");
    printf("ring id          %016llx\n", (unsigned long long)s->owners.ring_id);
    for (i = 0; i < 2; i++) {
        const shared_ring_owner *o = i == 0 ? &s->owners.producer : &s->owners.consumer;
        printf("%s pid     %u (%s)\n", i == 0 ? "producer" : "consumer", o->pid, alive_name(o));
    }
    for (i = 0; i < 2; i++) {
        const shared_ring_owner *o = i == 0 ? &s->owners.producer : &s->owners.consumer;
        if (o->pid == 0)
            printf("%-16s not attached\n", i == 0 ? "producer" : "consumer");
        else
            printf("%-16s %s; sleeps: %s; publishes %s\n", i == 0 ? "producer" : "consumer",
                   asleep(s, i) ? "asleep" : "awake", kind_name(s->wait_mode[i]),
                   s->fenceless_for[i] != 0 ? "without a fence (peer in its process)"
                                            : "with a fence");
    }
    if (asleep(s, 0))
        printf("producer wakes   once read_pos >= %llu\n", (unsigned long long)s->wake_pos);
    if (prev != NULL) {
        double dt = s->at - prev->at;
        printf("rate             %.0f bytes/s, ", (double)(s->write_pos - prev->write_pos) / dt);
        if (msgs < 0)
            printf("messages/s unknown (more than a lap was written between two looks, 100 us\n"
                   "                 apart unless this sampler was kept from running)\n");
        else
            printf("%.0f messages/s\n", (double)msgs / dt);
    }
}

static const char *json_alive(const shared_ring_owner *o) {
    if (o->pid == 0 || o->alive < 0) return "null";
    return o->alive ? "true" : "false";
}

static void print_json(const sample *s, const sample *prev, long long msgs) {
    long long fill = fill_bytes(s);
    char with[2][32];
    printf("{");
    if (prev != NULL) printf("\"time\":\"%s\",", s->utc);
    printf("\"layout_version\":%u,\"capacity\":%llu,\"max_message\":%u,\"write_pos\":%llu,"
           "\"read_pos\":%llu,\"fill_bytes\":%lld,\"fill_percent\":%.1f,\"closed\":%s,"
           "\"corrupt\":%s,\"producer_sleeping\":%s,\"consumer_sleeping\":%s,"
           "\"producer_sleeps_with\":%s,\"consumer_sleeps_with\":%s",
           s->version, (unsigned long long)s->capacity, s->max_message,
           (unsigned long long)s->write_pos, (unsigned long long)s->read_pos, fill,
           fill < 0 ? -1.0 : 100.0 * (double)fill / (double)s->capacity,
           s->closed ? "true" : "false", s->corrupt ? "true" : "false",
           json_asleep(s, 0), json_asleep(s, 1), json_sleeps_with(s, 0, with[0], sizeof with[0]),
           json_sleeps_with(s, 1, with[1], sizeof with[1]));
    printf(",\"ring_id\":\"%016llx\",\"producer_pid\":%u,\"producer_alive\":%s,"
           "\"consumer_pid\":%u,\"consumer_alive\":%s",
           (unsigned long long)s->owners.ring_id, s->owners.producer.pid,
           json_alive(&s->owners.producer), s->owners.consumer.pid,
           json_alive(&s->owners.consumer));
    if (prev != NULL) {
        double dt = s->at - prev->at;
        printf(",\"bytes_per_s\":%.0f,\"messages_per_s\":",
               (double)(s->write_pos - prev->write_pos) / dt);
        if (msgs < 0)
            printf("null");
        else
            printf("%.0f", (double)msgs / dt);
    }
    printf("}\n");
}

/* n + k, or -1 once either is unknown. */
static long long add_count(long long n, long long k) { return n < 0 || k < 0 ? -1 : n + k; }

/* Sleep `seconds` while following write_pos every 100 us, counting the
   messages published (so a ring that laps between two samples is still
   counted, unless it laps within one step). Returns the count, or -1;
   *pos is where the count ends. */
static long long follow_writes(const sample *s, double seconds, uint64_t *pos) {
    const struct timespec step = { 0, 100000 };
    double end = now_s() + seconds;
    long long n = 0;
    while (now_s() < end) {
        uint64_t next;
        nanosleep(&step, NULL);
        next = u64_at(OFF_WRITE_POS);
        n = add_count(n, count_records(s, *pos, next));
        *pos = next;
    }
    return n;
}

static int usage(void) {
    fprintf(stderr, "usage: shared_ring_stat PATH [--json] [--watch SECONDS]\n");
    return 2;
}

static const char *path;
static int json;
static double watch;

/* Sample until done; a SIGBUS (the file shrank) lands at the sigsetjmp. */
static int inspect(void) {
    static sample cur, prev;
    const char *why;
    if (sigsetjmp(shrank, 1) != 0) {
        fprintf(stderr, "%s: the file shrank while being read\n", path);
        return 1;
    }
    why = take_sample(&cur);
    if (why != NULL) {
        fprintf(stderr, "%s: %s\n", path, why);
        return 1;
    }
    if (json)
        print_json(&cur, NULL, 0);
    else
        print_text(&cur, NULL, 0);
    while (watch > 0) {
        uint64_t pos = cur.write_pos;
        long long msgs;
        fflush(stdout);
        msgs = follow_writes(&cur, watch, &pos);
        prev = cur;
        why = take_sample(&cur);
        if (why != NULL) {
            fprintf(stderr, "%s: %s\n", path, why);
            return 1;
        }
        msgs = msgs < 0 ? -1 : add_count(msgs, count_records(&cur, pos, cur.write_pos));
        if (json) {
            print_json(&cur, &prev, msgs);
        } else {
            printf("\n");
            print_text(&cur, &prev, msgs);
        }
    }
    return 0;
}

/* Open `arg` read-only, without following a link or blocking on a FIFO;
   a shm name (no '/' but a leading one) that is no file here is looked up
   in /dev/shm. */
static int open_ring(const char *arg) {
    const int flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
    char shm[4096];
    const char *name = arg[0] == '/' ? arg + 1 : arg;
    int fd = open(arg, flags);
    if (fd >= 0 || errno != ENOENT || strchr(name, '/') != NULL || name[0] == 0 ||
        strlen(name) + sizeof "/dev/shm/" > sizeof shm)
        return fd;
    snprintf(shm, sizeof shm, "/dev/shm/%s", name);
    fd = open(shm, flags);
    if (fd < 0) errno = ENOENT;
    return fd;
}

int main(int argc, char **argv) {
    int fd, i;
    struct stat st;
    void *map;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--watch") == 0 && i + 1 < argc) {
            char *end;
            watch = strtod(argv[++i], &end);
            if (*end != 0 || end == argv[i] || !(watch > 0 && watch < 1e6)) {
                fprintf(stderr, "--watch takes seconds above 0: not \"%s\"\n", argv[i]);
                return usage();
            }
        }
        else if (argv[i][0] == '-' || path != NULL)
            return usage();
        else
            path = argv[i];
    }
    if (path == NULL || watch < 0) return usage();
    fd = open_ring(path);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return 2;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: not a regular file (a directory, FIFO or device): not a ring\n", path);
        close(fd);
        return 1;
    }
    if (st.st_size < (off_t)SHARED_RING_HEADER_SIZE) {
        fprintf(stderr, "%s: %lld bytes: smaller than a shared_ring header (1024 bytes)\n", path,
                (long long)st.st_size);
        return 1;
    }
    region_size = (size_t)st.st_size;
    map = mmap(NULL, region_size, PROT_READ, MAP_SHARED, fd, 0);
    ring_fd = fd; /* kept: owners_of asks the kernel through it who lives */
    if (map == MAP_FAILED) {
        fprintf(stderr, "%s: mmap: %s\n", path, strerror(errno));
        return 2;
    }
    region = map;
    signal(SIGBUS, on_sigbus); /* the file shrank under the mapping */
    return inspect();
}
