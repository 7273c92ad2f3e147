// keel: a small pthread pool that runs parallel-for loops. MIT licence, see LICENSE.
//
// Scheduling: each thread owns a contiguous share of the items (thread k the
// k-th of n equal parts, the caller the first) and takes them from its front;
// a thread whose share is empty steals single items from the back of the
// others'. With the same count every loop, a thread works on the same items
// loop after loop (the scene's characters stay in one core's cache), and the
// stealing evens out items of different cost. Each share is one atomic word
// (front and back), so an owner and a thief never take the same item.
//
// Lifetime of a loop: the caller publishes it under the mutex (a new
// generation, the shares) and wakes the sleeping workers. A worker joins
// under the mutex only while the loop is not finished, and is counted while
// it runs items. The caller returns once every item is done and no worker is
// inside: it never waits for a worker that has not woken, and no worker can
// touch a loop's shares after the caller returned. The mutex orders the
// caller's writes before the items and the items' writes before the return.
//
// A compiler without <stdatomic.h> (tcc) gets a pool of one thread, the
// caller's: keel_jobs_create(n) returns NULL for n > 1.
#define _POSIX_C_SOURCE 200809L

#include "keel_jobs.h"

#include <stdlib.h>

#ifdef __STDC_NO_ATOMICS__
struct keel_jobs {
    uint32_t threads;
};

keel_jobs *keel_jobs_create(uint32_t threads)
{
    if (threads != 1)
        return NULL;
    keel_jobs *j = calloc(1, sizeof *j);
    if (j)
        j->threads = 1;
    return j;
}

void keel_jobs_destroy(keel_jobs *j) { free(j); }

uint32_t keel_jobs_threads(const keel_jobs *j) { return j->threads; }

void keel_jobs_parallel_for(void *jobs, uint32_t count, keel_jobs_task_fn fn, void *task)
{
    (void)jobs;
    if (count > 0)
        fn(task, 0, count);
}
#else

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

// One thread's share: front in the low 32 bits, back (exclusive) in the high.
// Padded to a cache line so that claims on different shares do not collide.
typedef struct share {
    _Atomic uint64_t range;
    char pad[64 - sizeof(uint64_t)];
} share;

struct keel_jobs {
    pthread_mutex_t lock;
    pthread_cond_t wake; // workers: a new loop, or stop
    pthread_cond_t done; // caller: an item or a worker finished
    pthread_t *workers;
    uint32_t worker_count; // started
    uint32_t threads;      // asked for: every one is started or the pool is not made
    share *shares;         // one per thread, the caller's first
    void *share_mem;
    bool stop;
    // The loop, written under the lock.
    uint32_t generation;
    uint32_t finished; // generation of the last loop the caller returned from
    uint32_t inside;   // workers running the current loop's items
    keel_jobs_task_fn fn;
    void *task;
    uint32_t count;
    _Atomic uint32_t completed; // items of this loop done
};

static uint64_t range_pack(uint32_t front, uint32_t back) { return (uint64_t)back << 32 | front; }

// The next item for thread `self`: from the front of its share, else from the
// back of another's. False when every share is empty.
static bool claim_item(keel_jobs *j, uint32_t self, uint32_t *item)
{
    uint32_t n = j->threads;
    _Atomic uint64_t *mine = &j->shares[self].range;
    uint64_t v = atomic_load_explicit(mine, memory_order_relaxed);
    while ((uint32_t)v < (uint32_t)(v >> 32)) {
        if (atomic_compare_exchange_weak_explicit(mine, &v, v + 1u, memory_order_relaxed, memory_order_relaxed)) {
            *item = (uint32_t)v;
            return true;
        }
    }
    for (uint32_t k = 1; k < n; k++) {
        _Atomic uint64_t *other = &j->shares[(self + k) % n].range;
        v = atomic_load_explicit(other, memory_order_relaxed);
        for (;;) {
            uint32_t front = (uint32_t)v, back = (uint32_t)(v >> 32);
            if (front >= back)
                break;
            if (atomic_compare_exchange_weak_explicit(other, &v, range_pack(front, back - 1u), memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *item = back - 1u;
                return true;
            }
        }
    }
    return false;
}

static void run_items(keel_jobs *j, uint32_t self, keel_jobs_task_fn fn, void *task)
{
    uint32_t i;
    while (claim_item(j, self, &i)) {
        fn(task, i, i + 1u);
        atomic_fetch_add_explicit(&j->completed, 1u, memory_order_acq_rel);
    }
}

typedef struct worker_arg {
    keel_jobs *jobs;
    uint32_t self;
} worker_arg;

static void *worker_main(void *arg)
{
    keel_jobs *j = ((worker_arg *)arg)->jobs;
    uint32_t self = ((worker_arg *)arg)->self;
    free(arg);
    uint32_t seen = 0;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (!j->stop && j->generation == seen)
            pthread_cond_wait(&j->wake, &j->lock);
        if (j->stop)
            break;
        seen = j->generation;
        if (j->finished == seen)
            continue; // woke too late: the caller did it all
        j->inside++;
        keel_jobs_task_fn fn = j->fn;
        void *task = j->task;
        pthread_mutex_unlock(&j->lock);
        run_items(j, self, fn, task);
        pthread_mutex_lock(&j->lock);
        j->inside--;
        pthread_cond_signal(&j->done);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

keel_jobs *keel_jobs_create(uint32_t threads)
{
    if (threads < 1 || threads > KEEL_JOBS_MAX_THREADS)
        return NULL;
    keel_jobs *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    atomic_init(&j->completed, 0);
    j->threads = threads;
    // Shares aligned to 64 bytes by hand (one spare share of room).
    j->share_mem = calloc((size_t)threads + 1u, sizeof(share));
    if (!j->share_mem) {
        free(j);
        return NULL;
    }
    uintptr_t at = ((uintptr_t)j->share_mem + 63u) & ~(uintptr_t)63u;
    j->shares = (share *)at;
    for (uint32_t k = 0; k < threads; k++)
        atomic_init(&j->shares[k].range, 0);
    if (pthread_mutex_init(&j->lock, NULL) != 0) {
        free(j->share_mem);
        free(j);
        return NULL;
    }
    if (pthread_cond_init(&j->wake, NULL) != 0) {
        pthread_mutex_destroy(&j->lock);
        free(j->share_mem);
        free(j);
        return NULL;
    }
    if (pthread_cond_init(&j->done, NULL) != 0) {
        pthread_cond_destroy(&j->wake);
        pthread_mutex_destroy(&j->lock);
        free(j->share_mem);
        free(j);
        return NULL;
    }
    if (threads > 1) {
        j->workers = calloc(threads - 1u, sizeof *j->workers);
        if (!j->workers) {
            keel_jobs_destroy(j);
            return NULL;
        }
        for (uint32_t i = 0; i + 1u < threads; i++) {
            worker_arg *a = malloc(sizeof *a);
            if (!a) {
                keel_jobs_destroy(j);
                return NULL;
            }
            a->jobs = j;
            a->self = i + 1u;
            if (pthread_create(&j->workers[i], NULL, worker_main, a) != 0) {
                free(a);
                keel_jobs_destroy(j); // joins the ones started
                return NULL;
            }
            j->worker_count++;
        }
    }
    return j;
}

void keel_jobs_destroy(keel_jobs *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->lock);
    j->stop = true;
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->lock);
    for (uint32_t i = 0; i < j->worker_count; i++)
        pthread_join(j->workers[i], NULL);
    free(j->workers);
    pthread_cond_destroy(&j->done);
    pthread_cond_destroy(&j->wake);
    pthread_mutex_destroy(&j->lock);
    free(j->share_mem);
    free(j);
}

uint32_t keel_jobs_threads(const keel_jobs *j) { return j->threads; }

void keel_jobs_parallel_for(void *jobs, uint32_t count, keel_jobs_task_fn fn, void *task)
{
    keel_jobs *j = jobs;
    if (count == 0)
        return;
    if (j->threads == 1 || count == 1) {
        fn(task, 0, count); // nobody to share with: one range
        return;
    }
    uint32_t n = j->threads;
    pthread_mutex_lock(&j->lock);
    // Generation 0 is the workers' "seen nothing yet": skipped when wrapping.
    uint32_t g = j->generation + 1u == 0 ? 1u : j->generation + 1u;
    j->generation = g;
    j->fn = fn;
    j->task = task;
    j->count = count;
    atomic_store_explicit(&j->completed, 0, memory_order_relaxed);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t front = (uint32_t)((uint64_t)count * k / n), back = (uint32_t)((uint64_t)count * (k + 1u) / n);
        atomic_store_explicit(&j->shares[k].range, range_pack(front, back), memory_order_relaxed);
    }
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->lock);
    run_items(j, 0, fn, task);
    // Every item taken; wait for the ones in progress and for the workers
    // inside to leave, then close the loop to latecomers.
    pthread_mutex_lock(&j->lock);
    while (atomic_load_explicit(&j->completed, memory_order_acquire) != count || j->inside > 0)
        pthread_cond_wait(&j->done, &j->lock);
    j->finished = g;
    pthread_mutex_unlock(&j->lock);
}
#endif // __STDC_NO_ATOMICS__
