/* Two threads, with cork and batch reads. A producer thread sends 1,000,000
   fixed-size samples, corked 64 at a time, so write_pos is published once
   per batch instead of once per message. The main thread reads with
   shared_ring_read, which hands over every available message per call and
   releases them with one store. Prints how many batches the consumer saw:
   far fewer than messages. */
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CAPACITY (1u << 20)
#define MESSAGES 1000000u

typedef struct sample {
    uint64_t seq;
    double value;
} sample;

static void *producer(void *region) {
    shared_ring_producer p;
    shared_ring_attach_producer(&p, region, shared_ring_region_size(CAPACITY, 0), NULL);
    for (uint64_t seq = 0; seq < MESSAGES;) {
        shared_ring_cork(&p); /* batch: one publish at uncork */
        for (int i = 0; i < 64 && seq < MESSAGES; i++, seq++) {
            sample s = { seq, (double)seq * 0.25 };
            shared_ring_write_bytes(&p, &s, sizeof s, SHARED_RING_FOREVER);
        }
        shared_ring_uncork(&p);
    }
    shared_ring_close(&p);
    return NULL;
}

typedef struct totals {
    uint64_t next_seq, out_of_order;
    double sum;
} totals;

static int on_sample(void *user, const void *data, size_t len) {
    totals *t = (totals *)user;
    const sample *s = (const sample *)data; /* 8-byte aligned: safe to cast */
    if (len != sizeof *s || s->seq != t->next_seq) t->out_of_order++;
    t->next_seq++;
    t->sum += s->value;
    return 0;
}

int main(void) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    void *region = aligned_alloc(128, size);
    shared_ring_consumer c;
    totals t = { 0, 0, 0.0 };
    uint64_t batches = 0;
    pthread_t thread;
    int r;

    shared_ring_format(region, size, CAPACITY, 0);
    shared_ring_attach_consumer(&c, region, size, NULL);
    pthread_create(&thread, NULL, producer, region);
    while ((r = shared_ring_read(&c, on_sample, &t, SHARED_RING_FOREVER)) >= 0) batches++;
    pthread_join(thread, NULL);

    printf("%llu samples in %llu batches, %llu out of order, sum %.0f\n",
           (unsigned long long)t.next_seq, (unsigned long long)batches,
           (unsigned long long)t.out_of_order, t.sum);
    free(region);
    return t.next_seq == MESSAGES && t.out_of_order == 0 && r == SHARED_RING_CLOSED ? 0 : 1;
}
