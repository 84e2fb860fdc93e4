/* Shared memory a peer cannot pull away or pre-empt: the sealed memfd of
   shm_anonymous, a named object whose creator died before sizing it, and
   named objects of another user or open to others (POSIX, Linux); and a
   mapping whose page faults are taken before the first lap. */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIZE 65536u

static char name[64];

static void fresh_name(void) {
    static int n;
    snprintf(name, sizeof name, "/shared_ring_trust_%d_%d", (int)getpid(), n++);
    shm_unlink(name);
}

TEST(a_peer_holding_the_anonymous_descriptor_cannot_shrink_it) {
    shared_ring_shm shm;
    CHECK_EQ(shared_ring_shm_anonymous(&shm, SIZE), SHARED_RING_OK);
    CHECK(ftruncate(shm.fd, 0) != 0);    /* what a peer with the fd would try */
    CHECK(ftruncate(shm.fd, SIZE * 2) != 0);
    ((volatile unsigned char *)shm.region)[SIZE - 1] = 1; /* still mapped: no SIGBUS */
    CHECK_EQ(shared_ring_shm_close(&shm), SHARED_RING_OK);
}

static long minor_faults(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/* Writes a byte of every page: the first lap of a ring. Returns the
   page faults it took. */
static long faults_writing_every_page(shared_ring_shm *shm) {
    long before = minor_faults();
    size_t off;
    for (off = 0; off < shm->size; off += 4096u) ((volatile unsigned char *)shm->region)[off] = 1;
    return minor_faults() - before;
}

TEST(a_prefaulted_mapping_takes_no_page_fault_on_its_first_lap) {
    shared_ring_shm fresh, warm;
    size_t size = 8u << 20; /* 2,048 pages */
    CHECK_EQ(shared_ring_shm_anonymous(&fresh, size), SHARED_RING_OK);
    CHECK(faults_writing_every_page(&fresh) > 100); /* what prefault saves */
    CHECK_EQ(shared_ring_shm_anonymous(&warm, size), SHARED_RING_OK);
    CHECK_EQ(shared_ring_shm_prefault(&warm), SHARED_RING_OK);
    CHECK(faults_writing_every_page(&warm) < 10);
    CHECK_EQ(shared_ring_shm_close(&fresh), SHARED_RING_OK);
    CHECK_EQ(shared_ring_shm_close(&warm), SHARED_RING_OK);
}

TEST(an_object_whose_creator_died_before_sizing_it_is_sized_by_an_opener) {
    shared_ring_shm shm;
    int fd;
    fresh_name();
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600); /* created, never sized */
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(shared_ring_shm_open(&shm, name, SIZE, 0), SHARED_RING_OK);
    CHECK_EQ(shm.size, SIZE);
    CHECK_EQ(shared_ring_prepare(shm.region, shm.size, 0, 0, shm.fd), SHARED_RING_OK);
    CHECK_EQ(shared_ring_shm_close(&shm), SHARED_RING_OK);
    shm_unlink(name);
}

TEST(an_existing_object_open_to_others_is_refused) {
    shared_ring_shm shm;
    int fd;
    fresh_name();
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, SIZE) == 0);
    CHECK(fchmod(fd, 0666) == 0); /* as another user could have left it */
    close(fd);
    CHECK_EQ(shared_ring_shm_open(&shm, name, SIZE, 0), SHARED_RING_ERR_ACCESS);
    CHECK(strstr(shared_ring_why(), "with mode 0666") != NULL);
    CHECK(shm.region == NULL);
    shm_unlink(name);
}

TEST(an_existing_object_of_another_user_is_refused) {
    shared_ring_shm shm;
    int fd;
    if (geteuid() != 0) {
        printf("  skipped: needs root to give an object to another user\n");
        return;
    }
    fresh_name();
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, SIZE) == 0);
    CHECK(fchown(fd, 65534, 65534) == 0); /* nobody */
    close(fd);
    CHECK_EQ(shared_ring_shm_open(&shm, name, SIZE, 0), SHARED_RING_ERR_ACCESS);
    shm_unlink(name);
}

TEST(the_creator_makes_the_object_with_mode_0600) {
    shared_ring_shm shm;
    struct stat st;
    fresh_name();
    CHECK_EQ(shared_ring_shm_open(&shm, name, SIZE, 0), SHARED_RING_OK);
    CHECK_EQ(fstat(shm.fd, &st), 0);
    CHECK_EQ(st.st_mode & 0777, 0600);
    CHECK_EQ(shared_ring_shm_close(&shm), SHARED_RING_OK);
    shm_unlink(name);
}

TEST(an_existing_object_of_another_size_says_both_sizes) {
    shared_ring_shm shm, other;
    fresh_name();
    CHECK_EQ(shared_ring_shm_open(&shm, name, SIZE, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_shm_open(&other, name, SIZE / 2, 0), SHARED_RING_ERR_SIZE);
    CHECK(strstr(shared_ring_why(), "has 65536 bytes, not the 32768 asked for") != NULL);
    CHECK_EQ(shared_ring_shm_close(&shm), SHARED_RING_OK);
    shm_unlink(name);
}

TEST(opening_a_missing_name_with_a_zero_timeout_says_not_yet_not_timeout) {
    shared_ring_shm shm;
    fresh_name();
    CHECK_EQ(shared_ring_shm_open(&shm, name, 0, 0), SHARED_RING_NOT_FORMATTED);
    CHECK(strstr(shared_ring_why(), "does not exist, or is not sized, yet") != NULL);
    CHECK_EQ(shared_ring_shm_open(&shm, name, 0, 2000000), SHARED_RING_TIMEOUT);
}

int main(void) {
    umask(0);
    RUN(a_peer_holding_the_anonymous_descriptor_cannot_shrink_it);
    RUN(an_object_whose_creator_died_before_sizing_it_is_sized_by_an_opener);
    RUN(an_existing_object_open_to_others_is_refused);
    RUN(an_existing_object_of_another_user_is_refused);
    RUN(the_creator_makes_the_object_with_mode_0600);
    RUN(an_existing_object_of_another_size_says_both_sizes);
    RUN(opening_a_missing_name_with_a_zero_timeout_says_not_yet_not_timeout);
    RUN(a_prefaulted_mapping_takes_no_page_fault_on_its_first_lap);
    return harness_summary("shm trust");
}
