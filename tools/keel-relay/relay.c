// keel-relay: the socket loop. MIT licence, see LICENSE.
//
// One listening socket for the clients; per client address an upstream socket
// bound to 127.0.0.1 and connected to the server. Every datagram read goes
// through the client's shape_state for its direction (shape.c) and the copies
// it delivers wait in a min-heap until their delivery time. Times are
// microseconds of CLOCK_MONOTONIC since the start.
#define _POSIX_C_SOURCE 200809L

#include "relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RECV_MAX 65536
#define READS_PER_WAKE 256 // per socket, so one busy socket cannot starve the rest

static volatile sig_atomic_t g_stop = 0;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct client {
    bool used;
    uint64_t gen; ///< changes when the slot is reused
    struct sockaddr_in addr;
    int fd; ///< upstream socket, connected to the server
    shape_state shape[2];
    int64_t last_active_us;
} client;

typedef struct pending {
    int64_t at_us;
    uint64_t seq; ///< ties broken by arrival order
    uint32_t slot;
    uint64_t gen;
    uint8_t dir;
    uint32_t len;
    unsigned char *data;
} pending;

typedef struct relay {
    relay_config *c;
    int listen_fd;
    client *clients;
    uint32_t nclients;        ///< slots in use
    uint64_t next_gen;        ///< also counts clients ever seen
    uint64_t clients_refused; ///< datagrams from addresses beyond --max-clients
    pending *heap;
    uint32_t nheap;
    uint64_t seq;
    shape_stats st[2];
    int64_t start_ns;
    unsigned char buf[RECV_MAX];
    char line[512]; ///< --control input
    size_t line_len;
    bool stdin_open;
} relay;

static int64_t now_us(const relay *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return (ns - r->start_ns) / 1000;
}

// ---- the delivery heap ------------------------------------------------------

static bool heap_less(const pending *a, const pending *b)
{
    return a->at_us < b->at_us || (a->at_us == b->at_us && a->seq < b->seq);
}

static void heap_push(relay *r, pending p)
{
    uint32_t i = r->nheap++;
    r->heap[i] = p;
    while (i > 0) {
        uint32_t up = (i - 1) / 2;
        if (!heap_less(&r->heap[i], &r->heap[up]))
            break;
        pending t = r->heap[i];
        r->heap[i] = r->heap[up];
        r->heap[up] = t;
        i = up;
    }
}

static pending heap_pop(relay *r)
{
    pending top = r->heap[0];
    r->heap[0] = r->heap[--r->nheap];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < r->nheap && heap_less(&r->heap[l], &r->heap[m]))
            m = l;
        if (l + 1 < r->nheap && heap_less(&r->heap[l + 1], &r->heap[m]))
            m = l + 1;
        if (m == i)
            break;
        pending t = r->heap[i];
        r->heap[i] = r->heap[m];
        r->heap[m] = t;
        i = m;
    }
    return top;
}

// ---- output -------------------------------------------------------------------

static const char *dir_name(int d) { return d == RELAY_UP ? "up" : "down"; }

static void print_stats(relay *r, bool final)
{
    double t = (double)now_us(r) / 1e6;
    for (int d = 0; d < 2; d++) {
        const shape_stats *s = &r->st[d];
        if (r->c->stats_json) {
            printf("{\"event\":\"stats\",\"t\":%.3f,\"final\":%s,\"dir\":\"%s\",\"in\":%" PRIu64
                   ",\"in_bytes\":%" PRIu64 ",\"out\":%" PRIu64 ",\"out_bytes\":%" PRIu64 ",\"drop_random\":%" PRIu64
                   ",\"drop_burst\":%" PRIu64 ",\"drop_bandwidth\":%" PRIu64 ",\"drop_other\":%" PRIu64
                   ",\"duplicated\":%" PRIu64 ",\"reordered\":%" PRIu64 ",\"flipped\":%" PRIu64
                   ",\"latency_ms\":%.3f,\"clients\":%" PRIu32 ",\"clients_seen\":%" PRIu64
                   ",\"clients_refused\":%" PRIu64 ",\"pending\":%" PRIu32 "}\n",
                   t, final ? "true" : "false", dir_name(d), s->in, s->in_bytes, s->out, s->out_bytes, s->drop_random,
                   s->drop_burst, s->drop_bandwidth, s->drop_other, s->duplicated, s->reordered, s->flipped,
                   r->c->dir[d].latency_us / 1000.0, r->nclients, r->next_gen, r->clients_refused, r->nheap);
        } else {
            printf("keel-relay %-4s in %" PRIu64 " (%" PRIu64 " B) out %" PRIu64 " (%" PRIu64
                   " B) dropped random %" PRIu64 " burst %" PRIu64 " bandwidth %" PRIu64 " other %" PRIu64
                   " duplicated %" PRIu64 " reordered %" PRIu64 " flipped %" PRIu64 "\n",
                   dir_name(d), s->in, s->in_bytes, s->out, s->out_bytes, s->drop_random, s->drop_burst,
                   s->drop_bandwidth, s->drop_other, s->duplicated, s->reordered, s->flipped);
        }
    }
    if (!r->c->stats_json)
        printf("keel-relay clients seen %" PRIu64 ", refused datagrams %" PRIu64 ", %.3f s\n", r->next_gen,
               r->clients_refused, t);
    fflush(stdout);
}

// An event's line; in JSON also "mono_us": the time on CLOCK_MONOTONIC (the
// clock every process on the machine shares), so that a program on the other
// side of the relay can tell which of its packets came before the event.
static void print_event(relay *r, const char *what)
{
    int64_t rel = now_us(r);
    double t = (double)rel / 1e6;
    if (r->c->stats_json)
        printf("{\"event\":\"%s\",\"t\":%.3f,\"mono_us\":%lld,\"latency_up_ms\":%.3f,\"latency_down_ms\":%.3f}\n", what,
               t, (long long)(r->start_ns / 1000 + rel), r->c->dir[0].latency_us / 1000.0,
               r->c->dir[1].latency_us / 1000.0);
    else
        fprintf(stderr, "keel-relay: %s at %.3f s: latency up %.3f ms, down %.3f ms\n", what, t,
                r->c->dir[0].latency_us / 1000.0, r->c->dir[1].latency_us / 1000.0);
    fflush(stdout);
}

// ---- clients ------------------------------------------------------------------

static void client_close(relay *r, uint32_t i)
{
    client *cl = &r->clients[i];
    if (!cl->used)
        return;
    close(cl->fd);
    cl->used = false;
    r->nclients--;
}

static bool set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

// The slot of a client address, opening its upstream socket when new; -1 when
// the cap is reached or the socket cannot be made.
static int client_find(relay *r, const struct sockaddr_in *from, int64_t now)
{
    int free_slot = -1;
    for (uint32_t i = 0; i < r->c->max_clients; i++) {
        client *cl = &r->clients[i];
        if (!cl->used) {
            if (free_slot < 0)
                free_slot = (int)i;
            continue;
        }
        if (cl->addr.sin_addr.s_addr == from->sin_addr.s_addr && cl->addr.sin_port == from->sin_port)
            return (int)i;
    }
    if (free_slot < 0)
        return -1;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        fprintf(stderr, "keel-relay: socket: %s\n", strerror(errno));
        return -1;
    }
    struct sockaddr_in local;
    memset(&local, 0, sizeof local);
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&local, sizeof local) != 0 ||
        connect(fd, (const struct sockaddr *)&r->c->server_addr, sizeof r->c->server_addr) != 0 || !set_nonblock(fd)) {
        fprintf(stderr, "keel-relay: upstream socket: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    client *cl = &r->clients[free_slot];
    uint64_t index = r->next_gen++;
    cl->used = true;
    cl->gen = index;
    cl->addr = *from;
    cl->fd = fd;
    cl->last_active_us = now;
    // Client k (in order of first datagram) gets the same streams in every run.
    shape_init(&cl->shape[RELAY_UP], shape_seed(r->c->seed, index, RELAY_UP));
    shape_init(&cl->shape[RELAY_DOWN], shape_seed(r->c->seed, index, RELAY_DOWN));
    // Shape time is the relay's clock (burst gaps are scheduled from its start).
    r->nclients++;
    return free_slot;
}

// ---- forwarding ---------------------------------------------------------------

static void take(relay *r, uint32_t slot, int dir, unsigned char *data, size_t len, int64_t now)
{
    client *cl = &r->clients[slot];
    uint32_t bit;
    if (shape_flip(&cl->shape[dir], &r->c->dir[dir], (uint32_t)len, &bit)) {
        data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        r->st[dir].flipped++;
    }
    shape_verdict v;
    shape_decide(&cl->shape[dir], &r->c->dir[dir], now, (uint32_t)len, &v);
    shape_count(&r->st[dir], &v, (uint32_t)len);
    for (int k = 0; k < v.copies; k++) {
        if (r->nheap >= r->c->max_pending) {
            r->st[dir].drop_other++;
            continue;
        }
        unsigned char *copy = malloc(len ? len : 1);
        if (!copy) {
            r->st[dir].drop_other++;
            continue;
        }
        memcpy(copy, data, len);
        pending p = {v.at_us[k], r->seq++, slot, cl->gen, (uint8_t)dir, (uint32_t)len, copy};
        heap_push(r, p);
    }
}

static void deliver_due(relay *r)
{
    while (r->nheap > 0) {
        int64_t now = now_us(r);
        if (r->heap[0].at_us > now)
            break;
        pending p = heap_pop(r);
        client *cl = &r->clients[p.slot];
        shape_stats *st = &r->st[p.dir];
        ssize_t n = -1;
        if (cl->used && cl->gen == p.gen) {
            if (p.dir == RELAY_UP)
                n = send(cl->fd, p.data, p.len, 0);
            else if (relay_is_loopback(&cl->addr)) // never anything else; checked again
                n = sendto(r->listen_fd, p.data, p.len, 0, (const struct sockaddr *)&cl->addr, sizeof cl->addr);
        }
        if (n == (ssize_t)p.len) {
            st->out++;
            st->out_bytes += p.len;
        } else {
            st->drop_other++;
        }
        free(p.data);
    }
}

static void read_listen(relay *r)
{
    for (int k = 0; k < READS_PER_WAKE; k++) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(r->listen_fd, r->buf, sizeof r->buf, 0, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return; // EAGAIN, or an error for an earlier send: nothing to read
        if (fl != sizeof from || !relay_is_loopback(&from))
            continue;
        int64_t now = now_us(r);
        int slot = client_find(r, &from, now);
        if (slot < 0) {
            r->clients_refused++;
            continue;
        }
        r->clients[slot].last_active_us = now;
        take(r, (uint32_t)slot, RELAY_UP, r->buf, (size_t)n, now);
    }
}

static void read_upstream(relay *r, uint32_t slot)
{
    client *cl = &r->clients[slot];
    for (int k = 0; k < READS_PER_WAKE; k++) {
        ssize_t n = recv(cl->fd, r->buf, sizeof r->buf, 0);
        if (n < 0) {
            if (errno == ECONNREFUSED)
                continue; // the server was not listening for an earlier datagram
            return;
        }
        int64_t now = now_us(r);
        cl->last_active_us = now;
        take(r, slot, RELAY_DOWN, r->buf, (size_t)n, now);
    }
}

// ---- --control ----------------------------------------------------------------

static void control_line(relay *r, char *line)
{
    char *words[4];
    int n = 0;
    for (char *tok = strtok(line, " \t\r"); tok && n < 4; tok = strtok(NULL, " \t\r"))
        words[n++] = tok;
    if (n == 0 || words[0][0] == '#')
        return;
    if (n == 1 && strcmp(words[0], "quit") == 0) {
        g_stop = 1;
        return;
    }
    if (n == 1 && strcmp(words[0], "stats") == 0) {
        print_stats(r, false);
        return;
    }
    unsigned dirs = 3;
    const char *value = words[1];
    if (n == 3) {
        if (strcmp(words[1], "up") == 0)
            dirs = 1;
        else if (strcmp(words[1], "down") == 0)
            dirs = 2;
        else if (strcmp(words[1], "both") != 0)
            n = 0;
        value = words[2];
    }
    if (n != 2 && n != 3) {
        fprintf(stderr, "keel-relay: control: expected SETTING [up|down|both] VALUE, stats or quit\n");
        return;
    }
    shape_params trial[2] = {r->c->dir[0], r->c->dir[1]};
    char err[256];
    if (!relay_setting(trial, words[0], dirs, value, err, sizeof err)) {
        fprintf(stderr, "keel-relay: control: %s\n", err);
        return;
    }
    for (int d = 0; d < 2; d++) {
        const char *msg = shape_params_check(&trial[d]);
        if (msg) {
            fprintf(stderr, "keel-relay: control: %s\n", msg);
            return;
        }
    }
    r->c->dir[0] = trial[0];
    r->c->dir[1] = trial[1];
    print_event(r, "control");
}

static void read_control(relay *r)
{
    char chunk[256];
    ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            r->stdin_open = false;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        char ch = chunk[i];
        if (ch == '\n') {
            r->line[r->line_len] = '\0';
            control_line(r, r->line);
            r->line_len = 0;
        } else if (r->line_len + 1 < sizeof r->line) {
            r->line[r->line_len++] = ch;
        }
    }
}

// ---- the loop -----------------------------------------------------------------

int relay_run(relay_config *c)
{
    static relay r; // large buffer; one relay per process
    memset(&r, 0, sizeof r);
    r.c = c;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r.start_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    r.listen_fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (r.listen_fd < 0 || bind(r.listen_fd, (const struct sockaddr *)&c->listen_addr, sizeof c->listen_addr) != 0 ||
        !set_nonblock(r.listen_fd)) {
        fprintf(stderr, "keel-relay: cannot listen: %s\n", strerror(errno));
        return 1;
    }
    struct sockaddr_in bound;
    socklen_t bl = sizeof bound;
    getsockname(r.listen_fd, (struct sockaddr *)&bound, &bl);
    r.clients = calloc(c->max_clients, sizeof *r.clients);
    r.heap = malloc((size_t)c->max_pending * sizeof *r.heap);
    struct pollfd *fds = malloc((c->max_clients + 2) * sizeof *fds);
    uint32_t *fd_slot = malloc((c->max_clients + 2) * sizeof *fd_slot);
    if (!r.clients || !r.heap || !fds || !fd_slot) {
        fprintf(stderr, "keel-relay: out of memory\n");
        return 1;
    }
    r.stdin_open = c->control;

    char la[INET_ADDRSTRLEN], sa_s[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &bound.sin_addr, la, sizeof la);
    inet_ntop(AF_INET, &c->server_addr.sin_addr, sa_s, sizeof sa_s);
    if (c->stats_json)
        printf("{\"event\":\"listen\",\"addr\":\"%s\",\"port\":%u,\"server\":\"%s:%u\",\"seed\":%" PRIu64 "}\n", la,
               ntohs(bound.sin_port), sa_s, ntohs(c->server_addr.sin_port), c->seed);
    else
        printf("keel-relay listening on %s:%u, server %s:%u, seed %" PRIu64 "\n", la, ntohs(bound.sin_port), sa_s,
               ntohs(c->server_addr.sin_port), c->seed);
    fflush(stdout);

    int64_t next_stats = c->stats_every_us > 0 ? c->stats_every_us : -1;
    bool step_done = !c->step;
    const int64_t idle_check_every = 1000000;
    int64_t next_idle_check = idle_check_every;

    while (!g_stop) {
        int64_t now = now_us(&r);
        if (c->duration_us > 0 && now >= c->duration_us)
            break;
        if (!step_done && now >= c->step_at_us) {
            c->dir[0].latency_us = c->step_latency_us[0];
            c->dir[1].latency_us = c->step_latency_us[1];
            step_done = true;
            print_event(&r, "step");
        }
        deliver_due(&r);
        if (next_stats >= 0 && now >= next_stats) {
            print_stats(&r, false);
            while (next_stats <= now)
                next_stats += c->stats_every_us;
        }
        if (c->client_idle_us > 0 && now >= next_idle_check) {
            for (uint32_t i = 0; i < c->max_clients; i++)
                if (r.clients[i].used && now - r.clients[i].last_active_us >= c->client_idle_us)
                    client_close(&r, i);
            next_idle_check = now + idle_check_every;
        }

        // Sleep until the next due time, at most 100 ms (a signal then ends
        // the loop promptly even if it arrived just before poll).
        int64_t wake = now + 100000;
        if (r.nheap > 0 && r.heap[0].at_us < wake)
            wake = r.heap[0].at_us;
        if (c->duration_us > 0 && c->duration_us < wake)
            wake = c->duration_us;
        if (!step_done && c->step_at_us < wake)
            wake = c->step_at_us;
        if (next_stats >= 0 && next_stats < wake)
            wake = next_stats;
        int64_t wait_us = wake - now_us(&r);
        int timeout = wait_us <= 0 ? 0 : (int)((wait_us + 999) / 1000);

        nfds_t nfds = 0;
        fds[nfds] = (struct pollfd){r.listen_fd, POLLIN, 0};
        fd_slot[nfds++] = UINT32_MAX;
        if (r.stdin_open) {
            fds[nfds] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
            fd_slot[nfds++] = UINT32_MAX - 1;
        }
        for (uint32_t i = 0; i < c->max_clients; i++) {
            if (!r.clients[i].used)
                continue;
            fds[nfds] = (struct pollfd){r.clients[i].fd, POLLIN, 0};
            fd_slot[nfds++] = i;
        }
        int ready = poll(fds, nfds, timeout);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "keel-relay: poll: %s\n", strerror(errno));
            break;
        }
        for (nfds_t k = 0; k < nfds && ready > 0; k++) {
            if (!fds[k].revents)
                continue;
            if (fd_slot[k] == UINT32_MAX)
                read_listen(&r);
            else if (fd_slot[k] == UINT32_MAX - 1)
                read_control(&r);
            else if (r.clients[fd_slot[k]].used)
                read_upstream(&r, fd_slot[k]);
        }
    }

    // Packets still waiting are not sent.
    while (r.nheap > 0) {
        pending p = heap_pop(&r);
        r.st[p.dir].drop_other++;
        free(p.data);
    }
    print_stats(&r, true);
    for (uint32_t i = 0; i < c->max_clients; i++)
        client_close(&r, i);
    close(r.listen_fd);
    free(r.clients);
    free(r.heap);
    free(fds);
    free(fd_slot);
    return 0;
}
