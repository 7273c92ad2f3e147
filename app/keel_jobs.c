// keel: a small pthread pool that runs parallel-for loops. MIT licence, see LICENSE.
//
// Scheduling: each thread owns a contiguous share of the items (thread k the
// k-th of n equal parts, the caller the first) and takes them from its front,
// a chunk at a time (a quarter of what is left of its share, at least one
// item: few claims early, single items near the end); a thread whose share is
// empty steals single items from the back of the others'. With the same count
// every loop, a thread works on the same items loop after loop (the scene's
// characters stay in one core's cache), and the stealing evens out items of
// different cost. Each share is one atomic word (front and back) on its own
// cache line, so an owner and a thief never take the same item.
//
// Waiting: a loop is often short (the scene's separation scans take tens of
// microseconds) and follows the last one closely, so waking a sleeping thread
// (a futex, and in a virtual machine an interrupt to a halted core) would
// cost about as much as the loop. A worker that finished a loop therefore
// watches for the next one for up to the pool's watch time (KEEL_JOBS_SPIN_NS
// unless set) before it sleeps on the condition variable, and the caller
// watches for the workers still inside a loop for up to KEEL_JOBS_SPIN_NS
// before it sleeps. Nobody spins when the pool has more threads than the
// machine has processors online (a spinning thread would take a core from
// one with work). keel_jobs_destroy bumps the generation, so a worker
// watching for a long time sees the stop at once.
//
// Lifetime of a loop: the caller publishes it under the mutex (a new
// generation, the shares) and wakes the sleeping workers. A worker joins
// under the mutex only while the loop is not finished, and is counted
// (`inside`) while it takes items; it leaves under the mutex. The caller
// returns once every item is taken (its own run_items came back empty) and no
// worker is inside, which it checks under the mutex: every item taken by a
// worker is done before that worker leaves, it never waits for a worker that
// has not woken, and no worker can touch a loop's shares after the caller
// returned. The mutex orders the caller's writes before the items and the
// items' writes before the return.
//
// A compiler without <stdatomic.h> (tcc) gets a pool of one thread, the
// caller's: keel_jobs_create(n) returns NULL for n > 1.
#define _POSIX_C_SOURCE 200809L

#include "keel_jobs.h"

#include <stdlib.h>

keel_jobs_settings keel_jobs_default_settings(void)
{
    keel_jobs_settings s = {1u, KEEL_JOBS_SPIN_NS};
    return s;
}

#ifdef __STDC_NO_ATOMICS__
struct keel_jobs {
    uint32_t threads;
};

keel_jobs *keel_jobs_create_with(const keel_jobs_settings *settings)
{
    return settings->watch_ns <= KEEL_JOBS_WATCH_MAX_NS ? keel_jobs_create(settings->threads) : NULL;
}

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

keel_jobs_stats keel_jobs_get_stats(const keel_jobs *j)
{
    (void)j;
    keel_jobs_stats s = {0};
    return s;
}
#else

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

// One thread's share: front in the low 32 bits, back (exclusive) in the high.
// Padded to a cache line so that claims on different shares do not collide.
typedef struct share {
    _Atomic uint64_t range;
    char pad[64 - sizeof(uint64_t)];
} share;

struct keel_jobs {
    pthread_mutex_t lock;
    pthread_cond_t wake; // workers: a new loop, or stop
    pthread_cond_t done; // caller: a worker left the loop
    pthread_t *workers;
    uint32_t worker_count; // started
    uint32_t threads;      // asked for: every one is started or the pool is not made
    bool spin;             // watch before sleeping (threads <= processors online)
    uint64_t watch_ns;     // a worker's watch for the next loop
    share *shares;         // one per thread, the caller's first
    void *share_mem;
    bool stop;
    // The loop, written under the lock (generation also read outside it by
    // spinning workers: stored last, with release).
    _Atomic uint32_t generation;
    uint32_t finished;       // generation of the last loop the caller returned from
    _Atomic uint32_t inside; // workers taking the current loop's items (changed under the lock)
    bool caller_asleep;      // the caller waits on `done`
    keel_jobs_task_fn fn;
    void *task;
    // Statistics (under the lock).
    keel_jobs_stats stats;
};

static uint64_t range_pack(uint32_t front, uint32_t back) { return (uint64_t)back << 32 | front; }

// The next items for thread `self`, [*begin, *end): a chunk from the front of
// its share, else one item from the back of another's. False when every
// share is empty.
static bool claim_items(keel_jobs *j, uint32_t self, uint32_t *begin, uint32_t *end)
{
    uint32_t n = j->threads;
    _Atomic uint64_t *mine = &j->shares[self].range;
    uint64_t v = atomic_load_explicit(mine, memory_order_relaxed);
    for (;;) {
        uint32_t front = (uint32_t)v, back = (uint32_t)(v >> 32);
        if (front >= back)
            break;
        uint32_t take = (back - front) / 4u;
        if (take == 0)
            take = 1;
        if (atomic_compare_exchange_weak_explicit(mine, &v, range_pack(front + take, back), memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *begin = front;
            *end = front + take;
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
                *begin = back - 1u;
                *end = back;
                return true;
            }
        }
    }
    return false;
}

static void run_items(keel_jobs *j, uint32_t self, keel_jobs_task_fn fn, void *task)
{
    uint32_t b, e;
    while (claim_items(j, self, &b, &e))
        fn(task, b, e);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// A hint to the core that this is a wait loop.
static void relax(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_ia32_pause();
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__ __volatile__("yield");
#endif
}

// Watches `*word` for up to `limit_ns` while it equals `value` (with
// `equal`) or differs from it: true when the wait ended before the time did.
static bool spin_while(const keel_jobs *j, const _Atomic uint32_t *word, uint32_t value, bool equal, uint64_t limit_ns)
{
    if (!j->spin || limit_ns == 0)
        return false;
    uint64_t t0 = 0;
    for (uint32_t k = 0;; k++) {
        if ((atomic_load_explicit(word, memory_order_acquire) == value) != equal)
            return true;
        relax();
        if ((k & 63u) == 63u) { // the clock now and then: a few hundred ns apart
            uint64_t t = now_ns();
            if (t0 == 0)
                t0 = t;
            else if (t - t0 > limit_ns)
                return false;
        }
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
        if (!j->stop && atomic_load_explicit(&j->generation, memory_order_relaxed) == seen) {
            // Watch for the next loop without the lock, then sleep.
            pthread_mutex_unlock(&j->lock);
            bool quick = spin_while(j, &j->generation, seen, true, j->watch_ns);
            pthread_mutex_lock(&j->lock);
            if (quick)
                j->stats.quick_joins++;
            while (!j->stop && atomic_load_explicit(&j->generation, memory_order_relaxed) == seen) {
                j->stats.sleeps++;
                pthread_cond_wait(&j->wake, &j->lock);
            }
        }
        if (j->stop)
            break;
        seen = atomic_load_explicit(&j->generation, memory_order_relaxed);
        if (j->finished == seen)
            continue; // woke too late: the caller did it all
        atomic_fetch_add_explicit(&j->inside, 1u, memory_order_relaxed);
        keel_jobs_task_fn fn = j->fn;
        void *task = j->task;
        pthread_mutex_unlock(&j->lock);
        run_items(j, self, fn, task);
        pthread_mutex_lock(&j->lock);
        atomic_fetch_sub_explicit(&j->inside, 1u, memory_order_release);
        if (j->caller_asleep)
            pthread_cond_signal(&j->done);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

static long processors_online(void)
{
#ifdef _SC_NPROCESSORS_ONLN
    return sysconf(_SC_NPROCESSORS_ONLN);
#else
    return -1; // unknown
#endif
}

keel_jobs *keel_jobs_create(uint32_t threads)
{
    keel_jobs_settings s = keel_jobs_default_settings();
    s.threads = threads;
    return keel_jobs_create_with(&s);
}

keel_jobs *keel_jobs_create_with(const keel_jobs_settings *settings)
{
    uint32_t threads = settings->threads;
    if (threads < 1 || threads > KEEL_JOBS_MAX_THREADS || settings->watch_ns > KEEL_JOBS_WATCH_MAX_NS)
        return NULL;
    keel_jobs *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    atomic_init(&j->generation, 0);
    atomic_init(&j->inside, 0);
    j->threads = threads;
    j->watch_ns = settings->watch_ns;
    long online = processors_online();
    j->spin = online < 1 || (long)threads <= online;
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
    // A new generation: a worker watching for the next loop sees it at once
    // (and then the stop, under the lock).
    uint32_t g = atomic_load_explicit(&j->generation, memory_order_relaxed) + 1u;
    atomic_store_explicit(&j->generation, g ? g : 1u, memory_order_release);
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

keel_jobs_stats keel_jobs_get_stats(const keel_jobs *j)
{
    keel_jobs *m = (keel_jobs *)j; // the lock only
    pthread_mutex_lock(&m->lock);
    keel_jobs_stats s = m->stats;
    pthread_mutex_unlock(&m->lock);
    return s;
}

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
    j->stats.loops++;
    j->fn = fn;
    j->task = task;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t front = (uint32_t)((uint64_t)count * k / n), back = (uint32_t)((uint64_t)count * (k + 1u) / n);
        atomic_store_explicit(&j->shares[k].range, range_pack(front, back), memory_order_relaxed);
    }
    // Generation 0 is the workers' "seen nothing yet": skipped when wrapping.
    uint32_t g = atomic_load_explicit(&j->generation, memory_order_relaxed) + 1u;
    if (g == 0)
        g = 1;
    atomic_store_explicit(&j->generation, g, memory_order_release); // last: spinning workers read the rest after it
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->lock);
    run_items(j, 0, fn, task);
    // Every item taken; wait for the workers inside (their last items), then
    // close the loop to latecomers.
    bool quick = spin_while(j, &j->inside, 0, false, KEEL_JOBS_SPIN_NS);
    pthread_mutex_lock(&j->lock);
    if (quick)
        j->stats.quick_returns++;
    while (atomic_load_explicit(&j->inside, memory_order_relaxed) > 0) {
        j->caller_asleep = true;
        j->stats.caller_sleeps++;
        pthread_cond_wait(&j->done, &j->lock);
    }
    j->caller_asleep = false;
    j->finished = g;
    pthread_mutex_unlock(&j->lock);
}
#endif // __STDC_NO_ATOMICS__
