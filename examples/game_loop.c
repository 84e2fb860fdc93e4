/* A game loop: once per frame, the main thread sends render and audio
   commands (tagged structs of different sizes) to a worker thread. Each
   command is built in place in the ring with claim/commit, so nothing is
   copied, and the frame is corked, so the worker is woken once per frame,
   not once per command. The worker casts each message back to its struct,
   which is safe because messages are 8-byte aligned and never wrap. */
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CAPACITY (1u << 16)
#define FRAMES 600

typedef enum { CMD_DRAW_SPRITE = 1, CMD_PLAY_SOUND, CMD_END_FRAME } cmd_tag;

typedef struct cmd_header {
    uint32_t tag, frame;
} cmd_header;
typedef struct draw_sprite {
    cmd_header h;
    float x, y, angle;
    uint32_t sprite;
} draw_sprite;
typedef struct play_sound {
    cmd_header h;
    uint32_t sound;
    float volume, pan;
} play_sound;
typedef struct end_frame {
    cmd_header h;
    uint32_t commands;
} end_frame;

/* Claim room for one command and fill in its header; the caller fills the
   rest in place and commits. */
static void *begin_command(shared_ring_producer *p, size_t size, cmd_tag tag, uint32_t frame) {
    void *dst;
    if (shared_ring_claim(p, size, &dst, SHARED_RING_FOREVER) != SHARED_RING_OK) abort();
    ((cmd_header *)dst)->tag = tag;
    ((cmd_header *)dst)->frame = frame;
    return dst;
}

typedef struct worker_stats {
    unsigned sprites, sounds, frames, bad;
} worker_stats;

static int execute(void *user, const void *data, size_t len) {
    worker_stats *w = (worker_stats *)user;
    const cmd_header *h = (const cmd_header *)data;
    if (len < sizeof *h) return w->bad++, 0;
    switch (h->tag) {
    case CMD_DRAW_SPRITE: w->sprites += len == sizeof(draw_sprite); break;
    case CMD_PLAY_SOUND: w->sounds += len == sizeof(play_sound); break;
    case CMD_END_FRAME: w->frames++; break;
    default: w->bad++;
    }
    return 0;
}

static void *render_worker(void *region) {
    static worker_stats w;
    shared_ring_consumer c;
    shared_ring_attach_consumer(&c, region, shared_ring_region_size(CAPACITY, 0), NULL);
    while (shared_ring_read(&c, execute, &w, SHARED_RING_FOREVER) >= 0) {
    }
    return &w;
}

int main(void) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    void *region = aligned_alloc(128, size);
    shared_ring_producer p;
    worker_stats *w;
    pthread_t worker;
    unsigned sprites = 0, sounds = 0;

    shared_ring_format(region, size, CAPACITY, 0);
    shared_ring_attach_producer(&p, region, size, NULL);
    pthread_create(&worker, NULL, render_worker, region);

    for (uint32_t frame = 0; frame < FRAMES; frame++) {
        uint32_t n = 0;
        shared_ring_cork(&p); /* the whole frame is published at once */
        for (uint32_t i = 0; i < 20 + frame % 7; i++, n++, sprites++) {
            draw_sprite *d = begin_command(&p, sizeof *d, CMD_DRAW_SPRITE, frame);
            d->x = (float)i * 16.0f;
            d->y = (float)frame;
            d->angle = 0.0f;
            d->sprite = i % 5;
            shared_ring_commit(&p, sizeof *d);
        }
        if (frame % 30 == 0) {
            play_sound *s = begin_command(&p, sizeof *s, CMD_PLAY_SOUND, frame);
            s->sound = frame / 30;
            s->volume = 0.8f;
            s->pan = 0.0f;
            shared_ring_commit(&p, sizeof *s);
            n++, sounds++;
        }
        end_frame *e = begin_command(&p, sizeof *e, CMD_END_FRAME, frame);
        e->commands = n;
        shared_ring_commit(&p, sizeof *e);
        shared_ring_uncork(&p);
    }
    shared_ring_close(&p);
    pthread_join(worker, (void **)&w);
    printf("worker ran %u frames: %u sprites, %u sounds, %u bad commands\n", w->frames, w->sprites,
           w->sounds, w->bad);
    free(region);
    return w->frames == FRAMES && w->sprites == sprites && w->sounds == sounds && w->bad == 0 ? 0
                                                                                              : 1;
}
