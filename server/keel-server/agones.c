// keel-server --agones: the Agones SDK sidecar's lifecycle through its REST
// gateway (libcurl). MIT licence, see LICENSE.
//
// Invariants:
// - Every HTTP call happens on the SDK thread started here, never on the
//   tick thread. The two share only atomics: the tick thread stores when it
//   last ticked and how many players are joined (agones_tick) and may set
//   the shutdown request; it reads ready / allocated / failed flags. It
//   never locks, never waits and allocates nothing.
// - POST /ready is sent once, before the tick loop runs (keel-server waits
//   for agones_ready before it services its socket, so no player joins
//   before Agones knows the server is Ready). It is retried while the
//   sidecar is not up, the backoff doubling from 50 ms to 2 s, for at most
//   AGONES_READY_TIMEOUT_MS; then agones_ready_failed says so.
// - POST /health every AGONES_HEALTH_PERIOD_MS, but only when the tick loop
//   ticked within AGONES_STALE_US: a stalled loop sends no pings, and Agones
//   replaces the server after its failure threshold.
// - PUT /metadata/label: keel-sim (the simulation identity, once) and
//   keel-players (whenever the count changed, at most every
//   AGONES_LABEL_MS). Values are valid Kubernetes label values. A refused
//   label is tried again after a backoff (AGONES_LABEL_BACKOFF_MS doubling
//   to AGONES_LABEL_BACKOFF_MAX_MS), not on every pass of the loop.
// - GET /gameserver every AGONES_POLL_MS until status.state is Allocated.
// - POST /shutdown when requested, retried with a backoff until accepted or
//   AGONES_SHUTDOWN_TIMEOUT_MS passed; agones_stop waits for it. Each call
//   is bounded by AGONES_CALL_TIMEOUT_MS.
//
// Built only with KEEL_HAVE_CURL (CMake sets it when pkg-config finds
// libcurl); without it, --agones is an error that says so.
#define _POSIX_C_SOURCE 200809L
#include "agones.h"

#include <stdio.h>
#include <string.h>

bool agones_label_value_valid(const char *v)
{
    size_t n = strlen(v);
    if (n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
            return false;
    }
    return true;
}

#ifndef KEEL_HAVE_CURL

bool agones_available(void) { return false; }
agones *agones_start(const char *sim_label)
{
    (void)sim_label;
    fputs("keel-server: --agones: this keel-server was built without libcurl (install the Debian package "
          "libcurl4-openssl-dev and build again)\n",
          stderr);
    return NULL;
}
void agones_tick(agones *a, uint64_t now_us, uint32_t players)
{
    (void)a;
    (void)now_us;
    (void)players;
}
bool agones_ready(const agones *a) { return a == NULL; }
bool agones_ready_failed(const agones *a) { return a != NULL; }
bool agones_allocated(const agones *a) { return a == NULL; }
const char *agones_state(const agones *a)
{
    (void)a;
    return "Starting";
}
void agones_request_shutdown(agones *a) { (void)a; }
void agones_get_counts(const agones *a, agones_counts *c)
{
    (void)a;
    memset(c, 0, sizeof *c);
}
void agones_stop(agones *a, agones_counts *counts)
{
    (void)a;
    if (counts)
        memset(counts, 0, sizeof *counts);
}
bool agones_public_address(char *out, size_t size, volatile sig_atomic_t *stop)
{
    (void)out;
    (void)size;
    (void)stop;
    return agones_start("") != NULL; // prints why not
}

#else

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "keel_app.h"

#define ANSWER_BYTES 65536u

struct agones {
    pthread_t thread;
    CURL *curl; ///< the SDK thread's
    char base[64];
    char sim_label[64];
    char *answer; ///< the last answer's body, ANSWER_BYTES (cut short beyond)
    size_t answer_len;
    // shared with the tick thread
    _Atomic uint64_t alive_us;
    _Atomic uint32_t players;
    atomic_bool ready, ready_failed, allocated, shutdown_requested, stop;
    // counts (written by the SDK thread, read by anyone)
    _Atomic uint64_t ready_tries, health_sent, health_skipped, labels_set, polls, errors;
    _Atomic uint64_t ready_failures, health_failures, label_failures, poll_failures, shutdown_failures;
    _Atomic uint64_t shutdown_tries;
    atomic_bool shutdown_sent;
};

bool agones_available(void) { return true; }

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    agones *a = ctx;
    size_t len = size * n, room = ANSWER_BYTES - 1 - a->answer_len;
    size_t take = len < room ? len : room;
    memcpy(a->answer + a->answer_len, data, take);
    a->answer_len += take;
    a->answer[a->answer_len] = '\0';
    return len; // the rest of a long answer is dropped, not an error
}

// One call: true on a 2xx answer (its body in a->answer); a failure counts
// in a->errors and in *failures.
static bool call(agones *a, const char *method, const char *path, const char *body, _Atomic uint64_t *failures)
{
    char url[128];
    snprintf(url, sizeof url, "%s%s", a->base, path);
    a->answer_len = 0;
    a->answer[0] = '\0';
    CURL *c = a->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)AGONES_CALL_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)AGONES_CALL_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
    struct curl_slist *headers = NULL;
    if (body) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    bool ok = rc == CURLE_OK && status >= 200 && status < 300;
    if (!ok) {
        atomic_fetch_add(&a->errors, 1);
        atomic_fetch_add(failures, 1);
    }
    return ok;
}

static bool set_label(agones *a, const char *key, const char *value)
{
    char body[160];
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", key, value);
    bool ok = call(a, "PUT", "/metadata/label", body, &a->label_failures);
    if (ok)
        atomic_fetch_add(&a->labels_set, 1);
    return ok;
}

// status.state of the GameServer in a->answer, or "" (the REST gateway's
// JSON: {"object_meta":{...},"spec":{...},"status":{"state":"Ready",...}}).
static void state_of(const agones *a, char *state, size_t size)
{
    state[0] = '\0';
    const char *st = strstr(a->answer, "\"status\":");
    const char *s = st ? strstr(st, "\"state\":\"") : NULL;
    if (!s)
        return;
    s += strlen("\"state\":\"");
    size_t n = strcspn(s, "\"");
    if (n >= size)
        n = size - 1;
    memcpy(state, s, n);
    state[n] = '\0';
}

static void nap_ms(uint32_t ms) { keel_app_sleep_until_us(keel_app_now_us() + (uint64_t)ms * 1000u); }

// The requested POST /shutdown, retried with a backoff (50 ms doubling to
// 1 s) until accepted or AGONES_SHUTDOWN_TIMEOUT_MS passed; nothing else is
// sent meanwhile (the server is going).
static void send_shutdown(agones *a)
{
    const uint64_t t0 = keel_app_now_us();
    uint32_t backoff_ms = 50;
    for (;;) {
        atomic_fetch_add(&a->shutdown_tries, 1);
        if (call(a, "POST", "/shutdown", "{}", &a->shutdown_failures)) {
            atomic_store(&a->shutdown_sent, true);
            return;
        }
        if (atomic_load(&a->shutdown_tries) == 1)
            fprintf(stderr, "keel-server: agones: POST /shutdown failed; retrying for up to %u s\n",
                    AGONES_SHUTDOWN_TIMEOUT_MS / 1000u);
        if (keel_app_now_us() - t0 >= (uint64_t)AGONES_SHUTDOWN_TIMEOUT_MS * 1000u) {
            fprintf(stderr, "keel-server: agones: POST /shutdown not accepted in %llu tries within %u s; giving up\n",
                    (unsigned long long)atomic_load(&a->shutdown_tries), AGONES_SHUTDOWN_TIMEOUT_MS / 1000u);
            return;
        }
        nap_ms(backoff_ms);
        backoff_ms = backoff_ms * 2 > 1000 ? 1000 : backoff_ms * 2;
    }
}

static void *sdk_thread(void *arg)
{
    agones *a = arg;
    // Ready, with a bounded backoff while the sidecar is not up yet.
    uint64_t t0 = keel_app_now_us();
    uint32_t backoff_ms = 50;
    for (;;) {
        if (atomic_load(&a->stop))
            return NULL;
        atomic_fetch_add(&a->ready_tries, 1);
        if (call(a, "POST", "/ready", "{}", &a->ready_failures))
            break;
        if (keel_app_now_us() - t0 >= (uint64_t)AGONES_READY_TIMEOUT_MS * 1000u) {
            atomic_store(&a->ready_failed, true);
            return NULL;
        }
        nap_ms(backoff_ms);
        backoff_ms = backoff_ms * 2 > 2000 ? 2000 : backoff_ms * 2;
    }
    atomic_store(&a->ready, true);
    bool sim_labelled = false;
    uint32_t players_labelled = UINT32_MAX;
    uint64_t next_health = 0, next_label = 0, next_poll = 0;
    uint32_t label_backoff_ms = AGONES_LABEL_BACKOFF_MS;
    for (;;) {
        if (atomic_load(&a->shutdown_requested)) {
            send_shutdown(a);
            break;
        }
        if (atomic_load(&a->stop))
            break;
        uint64_t now = keel_app_now_us(), alive = atomic_load(&a->alive_us);
        if (alive && now >= next_health) { // the first ping once the loop ticked
            next_health = now + AGONES_HEALTH_PERIOD_MS * 1000ull;
            if (now - alive < AGONES_STALE_US) {
                if (call(a, "POST", "/health", "{}", &a->health_failures))
                    atomic_fetch_add(&a->health_sent, 1);
            } else {
                atomic_fetch_add(&a->health_skipped, 1);
            }
        }
        // One label call at a time: keel-sim until it is set, then
        // keel-players when the count changed, at most every
        // AGONES_LABEL_MS; after a refusal, the backoff.
        uint32_t players = atomic_load(&a->players);
        if ((!sim_labelled || players != players_labelled) && now >= next_label) {
            char v[16];
            snprintf(v, sizeof v, "%u", players);
            bool sim = !sim_labelled;
            bool ok = sim ? set_label(a, "keel-sim", a->sim_label) : set_label(a, "keel-players", v);
            if (ok && sim)
                sim_labelled = true; // keel-players may follow on the next pass
            else if (ok)
                players_labelled = players;
            next_label = now + (!ok ? label_backoff_ms : sim ? 0u : AGONES_LABEL_MS) * 1000ull;
            label_backoff_ms = ok ? AGONES_LABEL_BACKOFF_MS
                                  : (label_backoff_ms * 2 > AGONES_LABEL_BACKOFF_MAX_MS ? AGONES_LABEL_BACKOFF_MAX_MS
                                                                                        : label_backoff_ms * 2);
        }
        if (!atomic_load(&a->allocated) && now >= next_poll) {
            next_poll = now + AGONES_POLL_MS * 1000ull;
            if (call(a, "GET", "/gameserver", NULL, &a->poll_failures)) {
                atomic_fetch_add(&a->polls, 1);
                char state[32];
                state_of(a, state, sizeof state);
                if (strcmp(state, "Allocated") == 0)
                    atomic_store(&a->allocated, true);
            }
        }
        nap_ms(20);
    }
    return NULL;
}

// The SDK's client, without its thread (NULL: the reason printed).
static agones *agones_new(void)
{
    const char *env = getenv("AGONES_SDK_HTTP_PORT");
    uint32_t port = 9358;
    if (env && env[0] && !keel_app_parse_u32(env, 1, 65535, &port)) {
        fprintf(stderr, "keel-server: --agones: AGONES_SDK_HTTP_PORT '%s' is not a port\n", env);
        return NULL;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fputs("keel-server: --agones: libcurl did not initialise\n", stderr);
        return NULL;
    }
    agones *a = calloc(1, sizeof *a);
    char *answer = malloc(ANSWER_BYTES);
    CURL *c = curl_easy_init();
    if (!a || !answer || !c) {
        fputs("keel-server: --agones: out of memory\n", stderr);
        goto fail;
    }
    a->curl = c;
    a->answer = answer;
    snprintf(a->base, sizeof a->base, "http://localhost:%u", port);
    return a;
fail:
    if (c)
        curl_easy_cleanup(c);
    free(answer);
    free(a);
    curl_global_cleanup();
    return NULL;
}

static void agones_free(agones *a)
{
    curl_easy_cleanup(a->curl);
    free(a->answer);
    free(a);
    curl_global_cleanup();
}

agones *agones_start(const char *sim_label)
{
    if (!agones_label_value_valid(sim_label)) {
        fprintf(stderr, "keel-server: --agones: '%s' is not a valid label value\n", sim_label);
        return NULL;
    }
    agones *a = agones_new();
    if (!a)
        return NULL;
    snprintf(a->sim_label, sizeof a->sim_label, "%s", sim_label);
    if (pthread_create(&a->thread, NULL, sdk_thread, a) != 0) {
        fputs("keel-server: --agones: cannot start its thread\n", stderr);
        agones_free(a);
        return NULL;
    }
    return a;
}

// status.address and status.ports[0].port of the GameServer in a->answer.
static bool address_of(const agones *a, char *out, size_t size)
{
    const char *st = strstr(a->answer, "\"status\":");
    const char *ad = st ? strstr(st, "\"address\":\"") : NULL;
    const char *ports = st ? strstr(st, "\"ports\":[") : NULL;
    const char *pt = ports ? strstr(ports, "\"port\":") : NULL;
    if (!ad || !pt)
        return false;
    ad += strlen("\"address\":\"");
    size_t n = strcspn(ad, "\"");
    unsigned long port = strtoul(pt + strlen("\"port\":"), NULL, 10);
    if (n == 0 || port == 0 || port > 65535 || n + 8 > size)
        return false;
    snprintf(out, size, "%.*s:%lu", (int)n, ad, port);
    return true;
}

bool agones_public_address(char *out, size_t size, volatile sig_atomic_t *stop)
{
    agones *a = agones_new();
    if (!a)
        return false;
    fprintf(stderr, "keel-server: agones: waiting for the GameServer's address from the SDK sidecar (%s)\n", a->base);
    uint64_t t0 = keel_app_now_us();
    bool ok = false;
    while (!ok && !*stop && keel_app_now_us() - t0 < (uint64_t)AGONES_READY_TIMEOUT_MS * 1000u) {
        ok = call(a, "GET", "/gameserver", NULL, &a->poll_failures) && address_of(a, out, size);
        if (!ok)
            nap_ms(200);
    }
    if (!ok && !*stop)
        fprintf(stderr,
                "keel-server: --public agones: the SDK sidecar gave no GameServer address and port within "
                "%u s\n",
                AGONES_READY_TIMEOUT_MS / 1000u);
    agones_free(a);
    return ok;
}

void agones_tick(agones *a, uint64_t now_us, uint32_t players)
{
    if (!a)
        return;
    atomic_store_explicit(&a->alive_us, now_us, memory_order_relaxed);
    atomic_store_explicit(&a->players, players, memory_order_relaxed);
}

bool agones_ready(const agones *a) { return !a || atomic_load(&((agones *)a)->ready); }
bool agones_ready_failed(const agones *a) { return a && atomic_load(&((agones *)a)->ready_failed); }
bool agones_allocated(const agones *a) { return !a || atomic_load(&((agones *)a)->allocated); }
const char *agones_state(const agones *a)
{
    agones *m = (agones *)a; // atomic_load takes a pointer to non-const in C11
    return !m || !atomic_load(&m->ready)    ? "Starting"
           : atomic_load(&m->shutdown_sent) ? "Shutdown"
           : atomic_load(&m->allocated)     ? "Allocated"
                                            : "Ready";
}

void agones_request_shutdown(agones *a)
{
    if (a)
        atomic_store(&a->shutdown_requested, true);
}

void agones_get_counts(const agones *a, agones_counts *c)
{
    memset(c, 0, sizeof *c);
    if (!a)
        return;
    agones *m = (agones *)a; // atomic_load takes a pointer to non-const in C11
    c->ready_tries = atomic_load(&m->ready_tries);
    c->health_sent = atomic_load(&m->health_sent);
    c->health_skipped = atomic_load(&m->health_skipped);
    c->labels_set = atomic_load(&m->labels_set);
    c->polls = atomic_load(&m->polls);
    c->errors = atomic_load(&m->errors);
    c->ready_failures = atomic_load(&m->ready_failures);
    c->health_failures = atomic_load(&m->health_failures);
    c->label_failures = atomic_load(&m->label_failures);
    c->poll_failures = atomic_load(&m->poll_failures);
    c->shutdown_failures = atomic_load(&m->shutdown_failures);
    c->shutdown_tries = atomic_load(&m->shutdown_tries);
    c->shutdown_sent = atomic_load(&m->shutdown_sent);
}

void agones_stop(agones *a, agones_counts *counts)
{
    if (!a)
        return;
    atomic_store(&a->stop, true);
    pthread_join(a->thread, NULL);
    if (counts)
        agones_get_counts(a, counts);
    agones_free(a);
}

#endif
