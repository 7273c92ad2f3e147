// keel: a small pthread pool that runs parallel-for loops. MIT licence, see LICENSE.
//
// A loop is published under the mutex with a new generation number and the
// sleeping workers are woken; every thread then claims items from one atomic
// word holding (generation << 32 | next item). A claim is a compare-and-swap
// that also checks the generation, so a worker that wakes late, after its
// loop has ended and maybe another begun, can never take an item of a loop it
// did not read the fields of. The caller returns once every item has
// completed, without waiting for workers that never got a processor: on a
// busy machine the caller simply does the work itself.
//
// Ordering: the caller's writes before the loop are released by the mutex
// the workers take to read the loop; the items' writes are released by their
// increments of `completed`, which the caller reads with acquire (or by the
// mutex when it sleeps).
#define _POSIX_C_SOURCE 200809L

#include "keel_jobs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct keel_jobs {
    pthread_mutex_t lock;
    pthread_cond_t wake; // workers: a new generation, or stop
    pthread_cond_t done; // caller: every item of its loop completed
    pthread_t *workers;
    uint32_t worker_count; // started
    bool stop;
    // The loop being run, written under the lock before the workers wake.
    uint32_t generation;
    keel_jobs_task_fn fn;
    void *task;
    uint32_t count;
    _Atomic uint64_t claim;       // generation << 32 | next item
    _Atomic uint32_t completed;   // items of this loop done
};

// The item a thread of loop `generation` may run next; false when none is left.
static bool claim_item(keel_jobs *j, uint32_t generation, uint32_t count, uint32_t *item)
{
    uint64_t v = atomic_load_explicit(&j->claim, memory_order_relaxed);
    for (;;) {
        if ((uint32_t)(v >> 32) != generation || (uint32_t)v >= count)
            return false;
        if (atomic_compare_exchange_weak_explicit(&j->claim, &v, v + 1u, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *item = (uint32_t)v;
            return true;
        }
    }
}

// Run items of the loop until none is left; true when this thread completed
// the loop's last item.
static bool run_items(keel_jobs *j, uint32_t generation, keel_jobs_task_fn fn, void *task, uint32_t count)
{
    bool last = false;
    uint32_t i;
    while (claim_item(j, generation, count, &i)) {
        fn(task, i, i + 1u);
        last = atomic_fetch_add_explicit(&j->completed, 1u, memory_order_acq_rel) + 1u == count;
    }
    return last;
}

static void *worker_main(void *arg)
{
    keel_jobs *j = arg;
    uint32_t seen = 0;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (!j->stop && j->generation == seen)
            pthread_cond_wait(&j->wake, &j->lock);
        if (j->stop)
            break;
        seen = j->generation;
        keel_jobs_task_fn fn = j->fn;
        void *task = j->task;
        uint32_t count = j->count;
        pthread_mutex_unlock(&j->lock);
        bool last = run_items(j, seen, fn, task, count);
        pthread_mutex_lock(&j->lock);
        // The caller may have seen the count complete and gone on already:
        // then this wake-up is a spurious one for its next loop (harmless).
        if (last)
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
    atomic_init(&j->claim, 0);
    atomic_init(&j->completed, 0);
    if (pthread_mutex_init(&j->lock, NULL) != 0) {
        free(j);
        return NULL;
    }
    if (pthread_cond_init(&j->wake, NULL) != 0) {
        pthread_mutex_destroy(&j->lock);
        free(j);
        return NULL;
    }
    if (pthread_cond_init(&j->done, NULL) != 0) {
        pthread_cond_destroy(&j->wake);
        pthread_mutex_destroy(&j->lock);
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
            if (pthread_create(&j->workers[i], NULL, worker_main, j) != 0) {
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
    free(j);
}

uint32_t keel_jobs_threads(const keel_jobs *j) { return j->worker_count + 1u; }

void keel_jobs_parallel_for(void *jobs, uint32_t count, keel_jobs_task_fn fn, void *task)
{
    keel_jobs *j = jobs;
    if (count == 0)
        return;
    if (j->worker_count == 0 || count == 1) {
        fn(task, 0, count); // nobody to share with: one range
        return;
    }
    pthread_mutex_lock(&j->lock);
    // Generation 0 is the workers' "seen nothing yet": skipped when wrapping.
    uint32_t g = j->generation + 1u == 0 ? 1u : j->generation + 1u;
    j->generation = g;
    j->fn = fn;
    j->task = task;
    j->count = count;
    atomic_store_explicit(&j->completed, 0, memory_order_relaxed);
    atomic_store_explicit(&j->claim, (uint64_t)g << 32, memory_order_relaxed);
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->lock);
    if (run_items(j, g, fn, task, count))
        return; // this thread completed the last item: all are done
    if (atomic_load_explicit(&j->completed, memory_order_acquire) == count)
        return;
    // The last item's worker signals under the lock after its increment, so
    // checking under the lock cannot miss it.
    pthread_mutex_lock(&j->lock);
    while (atomic_load_explicit(&j->completed, memory_order_acquire) != count)
        pthread_cond_wait(&j->done, &j->lock);
    pthread_mutex_unlock(&j->lock);
}
