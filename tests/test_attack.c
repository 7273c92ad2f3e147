// keel tests: attacks on secure mode with the real programs on loopback: a
// keel-server --key with bots playing throughout, and keel-attack (and
// keel-relay --flip) doing one thing a hostile client would, case by case.
// docs/attacks.md describes the cases and the table this prints. MIT
// licence, see LICENSE.
//
// Judged by counts only: the attacker's JSON line (what it sent, the replies,
// their largest size, the denial reasons), the server's JSON summary and its
// handshake line (refusals by reason), its stats lines (clients playing), the
// bots' summaries (hash mismatches, unexplained mispredictions) and the
// relay's flip counts. Times the programs report (the server's tick p99, its
// cost per handshake datagram) are printed, never asserted; every wait is
// bounded (a guard against hangs) and every flood is bounded in count and
// time. KEEL_ATTACK_FLOOD_SECONDS (1..10, default 3) sets the flood's length
// (bench/attack.sh runs 10 s at 10,000 a second).
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <keel/net_handshake.h>

#include "test_support.h"

static char dir[256];
static char key[300];

static void setup(void)
{
    keel_test_dir_make(dir, sizeof dir, "attack");
    snprintf(key, sizeof key, "%s", keel_test_dir_file(dir, "backend.key"));
    const char *args[] = {"keygen", key, NULL};
    keel_test_run_result r = keel_test_run(keel_test_program_path("keel-token"), args, NULL);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);
}

static void teardown(void) { keel_test_dir_remove(dir); }

TestSuite(attack, .init = setup, .fini = teardown, .timeout = 600);

static keel_test_run_result run(const char *program, const char *const *args)
{
    keel_test_run_options o = keel_test_run_default_options();
    o.timeout_s = 120; // a guard against hangs
    return keel_test_run(keel_test_program_path(program), args, &o);
}

// A field of a JSON text, or -1 when it is not there.
static double opt_num(const char *s, const char *key_name)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key_name);
    const char *at = s ? strstr(s, pat) : NULL;
    return at ? strtod(at + strlen(pat), NULL) : -1;
}

// The text of a JSON field that opens with `open` ('"' a string, '{' an
// object) up to its `close`, without quotes, into buf ("" when absent).
static const char *field_text(const char *json, const char *key_name, char open, char close, char *buf, size_t size)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":%c", key_name, open);
    const char *at = strstr(json, pat);
    size_t n = 0;
    for (at = at ? at + strlen(pat) : ""; *at && *at != close && n + 1 < size; at++)
        if (*at != '"')
            buf[n++] = *at;
    buf[n] = '\0';
    return buf;
}

static const char *str_field(const char *json, const char *key_name, char *buf, size_t size)
{
    return field_text(json, key_name, '"', '"', buf, size);
}

// A refusal reason's count on keel-server's "keel-server: handshake: ...
// refused N (reason n, ...)" line (0 when not listed, -1 without the line).
static long reason_count(const char *err, const char *reason)
{
    const char *line = strstr(err, "keel-server: handshake:");
    if (!line)
        return -1;
    const char *eol = strchr(line, '\n');
    for (int k = 0; k < 2; k++) {
        char pat[96];
        snprintf(pat, sizeof pat, "%s%s ", k ? ", " : "(", reason);
        const char *at = strstr(line, pat);
        if (at && (!eol || at < eol))
            return strtol(at + strlen(pat), NULL, 10);
    }
    return 0;
}

// A token for `server` ("127.0.0.1:P"); `age_s` > 0 issues it that long ago,
// valid for 300 s (so expired when age_s > 300).
static const char *issue(const char *name, unsigned client_id, const char *server, long age_s)
{
    const char *path = keel_test_dir_file(dir, name);
    char id[16], now[32];
    snprintf(id, sizeof id, "%u", client_id);
    snprintf(now, sizeof now, "%lld", (long long)time(NULL) - age_s);
    const char *args[] = {"issue", "--key", key, "--client-id", id,   "--server",
                          server,  "--now", now, "--out",       path, NULL};
    keel_test_run_result r = run("keel-token", args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    keel_test_run_free(&r);
    return path;
}

// ---- the server and its clients count ---------------------------------------------

typedef struct server {
    keel_test_proc proc;
    unsigned port;
    char addr[32];
} server;

static void server_start(server *s)
{
    const char *args[] = {
        "--bind", "127.0.0.1",    "--port",           "0", "--key", key, "--max-per-address", "32", "--duration",
        "400",    "--stats-json", "--stats-interval", "1", NULL};
    keel_test_proc_start(&s->proc, "keel-server", args);
    s->port = keel_test_wait_port(s->proc.err);
    cr_assert_gt(s->port, 0, "keel-server did not start");
    snprintf(s->addr, sizeof s->addr, "127.0.0.1:%u", s->port);
}

// The clients playing on the server, from a stats line printed after this
// call (up to ~10 s of waiting: a guard).
static long server_clients(const server *s)
{
    long lines_before = -1;
    for (int tries = 0; tries < 200; tries++) {
        char *out = keel_test_read_file(s->proc.out);
        long lines = 0;
        const char *last = NULL;
        for (const char *p = strstr(out, "{\"t\":"); p; p = strstr(p + 1, "{\"t\":")) {
            lines++;
            last = p;
        }
        long clients = last ? (long)opt_num(last, "clients") : -1;
        free(out);
        if (lines_before < 0)
            lines_before = lines;
        else if (lines >= lines_before + 1)
            return clients;
        keel_test_sleep_ms(50);
    }
    cr_assert_fail("keel-server printed no stats line");
    return -1;
}

// Waits (a guard: up to 60 s) until `want` clients play.
static void wait_clients(const server *s, long want)
{
    long n = -1;
    for (int tries = 0; tries < 60 && (n = server_clients(s)) < want; tries++)
        ;
    cr_assert_geq(n, want, "only %ld clients playing, %ld expected", n, want);
}

// ---- the attacker table ----------------------------------------------------------

typedef struct row {
    const char *name;
    double sent, request_bytes, slots, replies, reply_max, larger;
    char kinds[96];       ///< the attacker's replies by type
    const char *counters; ///< what the server counted: refusal reasons, or "#field" of its summary, '|' between
    char counted[160];    ///< their values at the end
} row;

enum { MAX_ROWS = 16 };
static row rows[MAX_ROWS];
static int nrows;

static row *add_row(const char *name, const char *attack_json, long slots, const char *counters)
{
    cr_assert_lt(nrows, MAX_ROWS);
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->counters = counters;
    r->slots = (double)slots;
    if (attack_json) {
        r->sent = keel_test_json_num(attack_json, "sent");
        r->request_bytes = keel_test_json_num(attack_json, "sent_max");
        r->replies = keel_test_json_num(attack_json, "replies");
        r->reply_max = keel_test_json_num(attack_json, "reply_max");
        r->larger = keel_test_json_num(attack_json, "replies_larger");
        field_text(attack_json, "reply_types", '{', '}', r->kinds, sizeof r->kinds);
    }
    return r;
}

// Fills every row's server counts from the server's summary and its
// handshake line, and prints the table.
static void print_table(const char *summary, const char *err)
{
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        size_t used = 0;
        for (const char *c = r->counters; c && *c;) {
            const char *bar = strchr(c, '|');
            char name[64];
            snprintf(name, sizeof name, "%.*s", bar ? (int)(bar - c) : (int)strlen(c), c);
            double v = name[0] == '#' ? opt_num(summary, name + 1) : (double)reason_count(err, name);
            used += (size_t)snprintf(r->counted + used, sizeof r->counted - used, "%s%s %.0f", used ? ", " : "",
                                     name[0] == '#' ? name + 1 : name, v);
            if (used >= sizeof r->counted || !bar)
                break;
            c = bar + 1;
        }
    }
    cr_log_info("%-36s %7s %5s %5s %7s %5s  %-28s %s", "case", "sent", "bytes", "slots", "replies", "max",
                "replies by type", "the server counted (whole run)");
    for (int i = 0; i < nrows; i++)
        cr_log_info("%-36s %7.0f %5.0f %5.0f %7.0f %5.0f  %-28s %s", rows[i].name, rows[i].sent, rows[i].request_bytes,
                    rows[i].slots, rows[i].replies, rows[i].reply_max, rows[i].kinds, rows[i].counted);
}

// ---- the cases ---------------------------------------------------------------------

// keel-attack with these arguments: exit 0, its JSON line (free it).
static char *attack(const char *const *args)
{
    keel_test_run_result r = run("keel-attack", args);
    cr_assert_eq(r.exit_code, 0, "keel-attack %s: %s", args[0], r.err);
    cr_assert_not_null(strstr(r.out, "{\"attack\":"), "%s", r.out);
    cr_log_info("keel-attack %s: %s", args[0], r.out);
    char *out = r.out;
    r.out = NULL;
    keel_test_run_free(&r);
    return out;
}

// A token refused for `reason`: the attacker's result and reason.
static void refused_token(const server *s, const char *name, const char *token, const char *damage, const char *reason)
{
    long before = server_clients(s);
    const char *args[] = {"request", "--server", s->addr, "--token", token, damage ? "--damage" : NULL, damage, NULL};
    char *out = attack(args);
    char buf[96];
    cr_expect_str_eq(str_field(out, "result", buf, sizeof buf), "denied", "%s: %s", name, out);
    cr_expect_str_eq(str_field(out, "reason", buf, sizeof buf), reason, "%s: %s", name, out);
    cr_expect_eq(keel_test_json_num(out, "replies_larger"), 0);
    add_row(name, out, server_clients(s) - before, reason);
    free(out);
}

// A bot process (keel-client) in the background.
static void bot_start(keel_test_proc *p, const char *port, const char *token_flag, const char *token, const char *bots,
                      const char *ticks)
{
    const char *args[] = {"--port",  port,  token_flag,          token, "--bots", bots,
                          "--ticks", ticks, "--connect-timeout", "60",  NULL};
    keel_test_proc_start(p, "keel-client", args);
}

// A bot process's summary after it ended (SIGINT when `interrupt`): exit 0,
// every bot played to the end with no hash mismatch and no misprediction of
// unknown cause. Returns its stdout (free it).
static char *bot_finish(keel_test_proc *p, const char *name, bool interrupt)
{
    if (interrupt)
        keel_test_proc_kill(p, SIGINT);
    else
        cr_assert(keel_test_proc_wait(p, 120000), "%s did not end", name);
    char *out = keel_test_read_file(p->out), *err = keel_test_read_file(p->err);
    cr_expect_eq(p->status, 0, "%s: %s", name, err);
    const char *totals = strstr(out, "],");
    cr_assert_not_null(totals, "%s: no summary: %s %s", name, out, err);
    cr_log_info("%s: %s", name, strstr(err, "keel-client:") ? strstr(err, "keel-client:") : err);
    cr_expect_eq(keel_test_json_num(totals, "hash_mismatches"), 0, "%s", name);
    cr_expect_eq(keel_test_json_num(totals, "unexplained"), 0, "%s", name);
    cr_expect_eq(keel_test_json_num(totals, "status"), 0, "%s", name);
    free(err);
    keel_test_proc_cleanup(p);
    return out;
}

// Bots that play until the test interrupts them play at most this long (5
// minutes at 64 Hz), so that none outlives a test that failed half-way.
#define PLAY_TICKS "19200"

static int flood_seconds(void)
{
    const char *e = getenv("KEEL_ATTACK_FLOOD_SECONDS");
    int s = e ? atoi(e) : 3;
    return s < 1 ? 1 : s > 10 ? 10 : s;
}

Test(attack, every_threat_against_a_playing_server)
{
    server s;
    server_start(&s);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    keel_test_proc bots, user;
    bot_start(&bots, port, "--token-key", key, "4", PLAY_TICKS); // interrupted at the end
    wait_clients(&s, 4);

    // tokens that must be refused
    char wrong[32];
    snprintf(wrong, sizeof wrong, "127.0.0.1:%u", s.port == 65535 ? s.port - 1 : s.port + 1);
    refused_token(&s, "expired token", issue("expired", 101, s.addr, 600), NULL, "expired");
    refused_token(&s, "token for another server", issue("wrong", 102, wrong, 0), NULL, "wrong server");
    refused_token(&s, "damaged token (byte 600 flipped)", issue("damaged", 103, s.addr, 0), "600", "damaged token");
    const char *in_use = issue("in_use", 104, s.addr, 0);
    bot_start(&user, port, "--token", in_use, "1", PLAY_TICKS);
    wait_clients(&s, 5);
    refused_token(&s, "token in use, from another address", in_use, NULL, "token in use from another address");

    // a captured session sent again: from another port, then from the same
    // port after the client left (capture itself, from its upstream socket)
    long before = server_clients(&s);
    const char *cap_file = keel_test_dir_file(dir, "session.cap");
    char cap_path[300];
    snprintf(cap_path, sizeof cap_path, "%s", cap_file);
    keel_test_proc cap;
    const char *cap_args[] = {"capture", "--server", s.addr,           "--listen", "0",      "--seconds", "60",
                              "--out",   cap_path,   "--replay-after", "8",        "--wait", "1000",      NULL};
    keel_test_proc_start(&cap, "keel-attack", cap_args);
    char cap_port[16];
    snprintf(cap_port, sizeof cap_port, "%u", keel_test_wait_port(cap.err));
    keel_test_proc captured;
    bot_start(&captured, cap_port, "--token", issue("captured", 105, s.addr, 0), "1", "384");
    free(bot_finish(&captured, "the captured client", false));
    const char *replay_args[] = {"replay", "--server", s.addr, "--in", cap_path, "--wait", "1000", NULL};
    char *replayed = attack(replay_args);
    cr_expect_gt(keel_test_json_num(replayed, "records"), 0);
    add_row("captured session, another port", replayed, server_clients(&s) - before,
            "token in use from another address|challenge from another address|challenge expired|"
            "challenge already used");
    free(replayed);
    cr_assert(keel_test_proc_wait(&cap, 90000), "the capture did not end");
    char *cap_out = keel_test_read_file(cap.out);
    cr_log_info("keel-attack capture: %s", cap_out);
    cr_expect_eq(cap.status, 0, "%s", cap_out);
    cr_expect_eq(opt_num(cap_out, "replayed"), 1, "%s", cap_out);
    if (strstr(cap_out, "{\"attack\":"))
        add_row("captured session, same port, later", cap_out, server_clients(&s) - before,
                "challenge already used|connect not admitted|#frames_forged|#frames_replayed");
    free(cap_out);
    keel_test_proc_cleanup(&cap);

    // bits flipped in the tags at the end of datagrams (secure mode's
    // datagram trailer) between one bot and the server
    before = server_clients(&s);
    keel_test_proc relay, flipped;
    const char *relay_args[] = {"--server",    s.addr, "--listen",    "0",   "--seed",     "7",
                                "--flip",      "20",   "--flip-tail", "16",  "--flip-min", "40",
                                "--flip-skip", "32",   "--duration",  "120", NULL};
    keel_test_proc_start(&relay, "keel-relay", relay_args);
    char relay_port[16];
    snprintf(relay_port, sizeof relay_port, "%u", keel_test_wait_port(relay.out));
    bot_start(&flipped, relay_port, "--token", issue("flipped", 106, s.addr, 0), "1", "384");
    char *flip_out = bot_finish(&flipped, "the bot behind the flipping relay", false);
    keel_test_proc_kill(&relay, SIGTERM);
    char *relay_out = keel_test_read_file(relay.out);
    cr_log_info("keel-relay: %s", relay_out);
    const char *up = strstr(relay_out, "keel-relay up"), *down = strstr(relay_out, "keel-relay down");
    cr_assert(up && down, "%s", relay_out);
    cr_assert(strstr(up, "flipped ") && strstr(down, "flipped "), "%s", relay_out);
    double flips_up = strtod(strstr(up, "flipped ") + 8, NULL), flips_down = strtod(strstr(down, "flipped ") + 8, NULL);
    cr_expect_gt(flips_up, 0, "%s", relay_out);
    cr_expect_gt(flips_down, 0, "%s", relay_out);
    double client_forged = keel_test_json_num(strstr(flip_out, "],"), "frames_forged");
    cr_log_info("flips: up %.0f, down %.0f; the bot counted %.0f datagrams forged", flips_up, flips_down,
                client_forged);
    cr_expect_gt(client_forged, 0, "flipped tags on the way down: %s", flip_out);
    row *fr = add_row("bits flipped (datagrams)", NULL, server_clients(&s) - before, "#frames_forged");
    fr->sent = flips_up + flips_down;
    snprintf(fr->kinds, sizeof fr->kinds, "up %.0f, down %.0f; bot forged %.0f", flips_up, flips_down, client_forged);
    free(flip_out);
    free(relay_out);
    keel_test_proc_cleanup(&relay);

    // floods of handshake requests at 10,000 a second: random token bytes,
    // then a real token (each one opened, each one challenged)
    char secs[8];
    snprintf(secs, sizeof secs, "%d", flood_seconds());
    const char *flood_token = issue("flood", 107, s.addr, 0);
    for (int k = 0; k < 2; k++) {
        before = server_clients(&s);
        const char *random_args[] = {"flood", "--server", s.addr, "--rate", "10000", "--seconds", "1", NULL};
        const char *real_args[] = {"flood",     "--server", s.addr,    "--rate",    "10000",
                                   "--seconds", secs,       "--token", flood_token, NULL};
        char *out = attack(k ? real_args : random_args);
        cr_expect_eq(keel_test_json_num(out, "replies_larger"), 0, "%s", out);
        cr_expect_leq(keel_test_json_num(out, "reply_max"), NET_HS_REQUEST_BYTES, "%s", out);
        cr_expect_gt(keel_test_json_num(out, "sent"), 0);
        long after = server_clients(&s);
        cr_expect_eq(after, before, "every bot still plays after the flood");
        add_row(k ? "flood, real token, 10000/s" : "flood, random tokens, 10000/s", out, after - before,
                k ? "#handshake_challenges|#handshake_rate_limited|#handshake_us_per_datagram"
                  : "invalid token|#handshake_rate_limited");
        free(out);
    }

    char *user_out = bot_finish(&user, "the in-use token's bot", true);
    free(user_out);
    char *bots_out = bot_finish(&bots, "the four bots", true);
    free(bots_out);

    keel_test_proc_kill(&s.proc, SIGTERM);
    char *out = keel_test_read_file(s.proc.out), *err = keel_test_read_file(s.proc.err);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    const char *hs = strstr(err, "keel-server: handshake:");
    cr_log_info("keel-server: %s", sum);
    cr_log_info("%.*s", hs ? (int)strcspn(hs, "\n") : 0, hs ? hs : "");
    // 4 bots, the in-use token's bot, the captured client, the flipped bot
    cr_expect_eq(keel_test_json_num(sum, "joined"), 7, "no client joined but the real ones");
    cr_expect_geq(reason_count(err, "expired"), 1, "%s", err);
    cr_expect_geq(reason_count(err, "wrong server"), 1);
    cr_expect_geq(reason_count(err, "damaged token"), 1);
    cr_expect_geq(reason_count(err, "token in use from another address"), 2, "the request and the replay");
    cr_expect_geq(reason_count(err, "invalid token"), 1, "the random flood");
    double forged = keel_test_json_num(sum, "frames_forged"), replayed_n = keel_test_json_num(sum, "frames_replayed");
    double us = keel_test_json_num(sum, "handshake_us_per_datagram");
    double hs_n = keel_test_json_num(sum, "handshake_datagrams");
    cr_log_info("server: tick ms p99 %.3f (cpu %.3f), handshake datagrams %.0f at %.2f us each, datagrams forged "
                "%.0f, datagrams replayed %.0f, challenges %.0f",
                keel_test_json_num(sum, "tick_ms_p99"), keel_test_json_num(sum, "tick_cpu_ms_p99"), hs_n, us, forged,
                replayed_n, keel_test_json_num(sum, "handshake_challenges"));
    cr_expect_gt(forged, 0, "flipped tags on the way up: %s", sum);
    cr_expect_geq(hs_n, 10000, "the random flood's datagrams at least: %s", sum);
    print_table(sum, err);
    free(out);
    free(err);
    keel_test_proc_cleanup(&s.proc);
}

Test(attack, spoofed_sources_take_no_slot_and_get_nothing_larger)
{
    server s;
    server_start(&s);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    keel_test_proc bots;
    bot_start(&bots, port, "--token-key", key, "2", PLAY_TICKS);
    wait_clients(&s, 2);
    const char *token = issue("spoof", 201, s.addr, 0);
    const char *args[] = {"spoof", "--server", s.addr, "--count", "4000", "--rate", "2000", "--token", token, NULL};
    keel_test_run_result r = run("keel-attack", args);
    if (r.exit_code == 77) {
        char why[256];
        snprintf(why, sizeof why, "%s", r.err);
        keel_test_run_free(&r);
        keel_test_proc_kill(&bots, SIGINT);
        keel_test_proc_cleanup(&bots);
        keel_test_proc_cleanup(&s.proc);
        cr_skip("no raw socket here (run as root or with CAP_NET_RAW): %s", why);
    }
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_log_info("keel-attack spoof: %s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "replies_larger"), 0, "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "connect_replies"), 0, "CONNECTs from unadmitted addresses: %s", r.out);
    cr_expect_leq(keel_test_json_num(r.out, "request_reply_max"), NET_HS_CHALLENGE_BYTES, "%s", r.out);
    cr_expect_eq(server_clients(&s), 2, "no slot taken");
    add_row("spoofed sources (REQUEST + CONNECT)", r.out, server_clients(&s) - 2,
            "connect not admitted|#handshake_challenges");
    keel_test_run_free(&r);
    free(bot_finish(&bots, "the two bots", true));
    keel_test_proc_kill(&s.proc, SIGTERM);
    char *out = keel_test_read_file(s.proc.out), *err = keel_test_read_file(s.proc.err);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    cr_expect_eq(keel_test_json_num(sum, "joined"), 2, "only the bots joined");
    cr_expect_geq(reason_count(err, "connect not admitted"), 1, "%s", err);
    print_table(sum, err);
    free(out);
    free(err);
    keel_test_proc_cleanup(&s.proc);
}

// A flood of 200,000 handshake REQUESTs a second from 127.9.9.9 (keel-attack
// flood --source; at most 3 s, 600,000 datagrams) while a player
// (keel-attack request, 10 rounds of one token from 127.0.0.1, each sent
// again every 100 ms for up to 1 s) and, with random tokens, 4 bots join.
// Random token bytes fail the clear header: they spend no budget (the
// server counts none rate limited) and every round is answered. A damaged
// real token passes it: the flood is opened only within its prefix's share
// (NET_HS_PREFIX_REQUESTS_PER_S), and the player's rounds are still
// answered. Judged by the counts the programs print.
static void flood_and_join(bool damaged)
{
    server s;
    server_start(&s);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    const char *flood_token = issue("share_flood", 301, s.addr, 0), *player = issue("share_player", 302, s.addr, 0);
    keel_test_proc flood, bots;
    // 200,000 a second; a quarter of it under the sanitizers, where the
    // server's every read costs several times more
    const char *rate = KEEL_TEST_SIZE("200000", "50000");
    const char *random_args[] = {"flood", "--server", s.addr,      "--rate", rate,  "--seconds",
                                 "3",     "--source", "127.9.9.9", "--wait", "200", NULL};
    const char *damaged_args[] = {"flood",     "--server", s.addr,      "--rate", rate,  "--seconds",
                                  "3",         "--source", "127.9.9.9", "--wait", "200", "--token",
                                  flood_token, "--damage", "600",       NULL};
    keel_test_proc_start(&flood, "keel-attack", damaged ? damaged_args : random_args);
    keel_test_sleep_ms(300);
    if (!damaged)
        bot_start(&bots, port, "--token-key", key, "4", "128");
    const char *req_args[] = {"request", "--server", s.addr,   "--token", player,
                              "--count", "10",       "--wait", "1000",    NULL};
    char *req = attack(req_args);
    if (!damaged)
        free(bot_finish(&bots, "four bots joining during the flood", false));
    cr_assert(keel_test_proc_wait(&flood, 60000), "the flood did not end");
    char *flood_out = keel_test_read_file(flood.out);
    cr_log_info("keel-attack flood: %s", flood_out);
    keel_test_proc_kill(&s.proc, SIGTERM);
    char *out = keel_test_read_file(s.proc.out), *err = keel_test_read_file(s.proc.err);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    const char *hs = strstr(err, "keel-server: handshake:");
    cr_log_info("%.*s", hs ? (int)strcspn(hs, "\n") : 0, hs ? hs : "");
    double sent = keel_test_json_num(flood_out, "sent"), secs = keel_test_json_num(flood_out, "send_seconds");
    cr_log_info("%s flood: %.0f sent in %.2f s; the player's rounds: %.0f of 10 unanswered",
                damaged ? "damaged" : "random", sent, secs, keel_test_json_num(req, "rounds_unanswered"));
    cr_expect_gt(sent, 0);
    cr_expect_eq(keel_test_json_num(req, "rounds_unanswered"), 0, "the player was not answered: %s", req);
    if (!damaged) {
        cr_expect_eq(keel_test_json_num(sum, "joined"), 4, "the bots joined during the flood");
        cr_expect_eq(reason_count(err, "rate limited"), 0, "random tokens spent the budget: %s", hs);
    } else {
        // opened: the flood's denials (each one opened), at most its share
        // for the time it was read (flood, its wait, and a second of margin)
        double opened = (double)reason_count(err, "damaged token"), bound = NET_HS_PREFIX_REQUESTS_PER_S * (secs + 2.2);
        cr_log_info("damaged tokens opened %.0f, the prefix's share allows %.0f", opened, bound);
        cr_expect_leq(opened, bound, "the flood spent more than its prefix's share: %s", hs);
        cr_expect_gt(reason_count(err, "rate limited"), 0, "%s", hs);
    }
    free(req);
    free(flood_out);
    free(out);
    free(err);
    keel_test_proc_cleanup(&flood);
    keel_test_proc_cleanup(&s.proc);
}

Test(attack, a_random_flood_spends_no_budget) { flood_and_join(false); }

Test(attack, a_flood_from_one_prefix_spends_its_own_share) { flood_and_join(true); }

// The UDP port (host order) a process's socket is bound to, from its
// /proc/PID/fd links and /proc/net/udp (0: none found): what an attacker who
// knows where a player is knows.
static unsigned process_udp_port(pid_t pid)
{
    char path[64], link[64];
    unsigned long inodes[16];
    int n = 0;
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) && n < 16;) {
        char fd_path[320];
        snprintf(fd_path, sizeof fd_path, "%s/%s", path, e->d_name);
        ssize_t len = readlink(fd_path, link, sizeof link - 1);
        if (len > 0) {
            link[len] = '\0';
            if (sscanf(link, "socket:[%lu]", &inodes[n]) == 1)
                n++;
        }
    }
    closedir(d);
    FILE *f = fopen("/proc/net/udp", "r");
    if (!f)
        return 0;
    char line[512];
    unsigned port = 0;
    while (!port && fgets(line, sizeof line, f)) {
        unsigned p;
        unsigned long inode;
        if (sscanf(line, " %*s %*[0-9A-Fa-f]:%x %*s %*s %*s %*s %*s %*s %*s %lu", &p, &inode) != 2)
            continue;
        for (int i = 0; i < n; i++)
            if (inodes[i] == inode)
                port = p;
    }
    fclose(f);
    return port;
}

// keel-attack forge against a playing keel-client (one bot, 20 s): ENet's
// framing forged from the player's address and port through a raw socket
// (an unsequenced-group sweep, a bandwidth limit of 1 byte/s to the server)
// and from the server's (a DISCONNECT in each session). Every forgery is
// dropped and counted, and the player plays to the end: its commands reach
// the server, its snapshots reach it, nobody is disconnected.
Test(attack, forged_enet_framing_from_a_players_address_changes_nothing)
{
    server s;
    server_start(&s);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    keel_test_proc bot;
    bot_start(&bot, port, "--token", issue("forge_player", 401, s.addr, 0), "1", "1280");
    wait_clients(&s, 1);
    unsigned player_port = process_udp_port(bot.pid);
    cr_assert_gt(player_port, 0, "the player's port was not found");
    char victim[32];
    snprintf(victim, sizeof victim, "127.0.0.1:%u", player_port);
    const char *args[] = {"forge", "--server", s.addr, "--victim", victim, "--wait", "1000", NULL};
    keel_test_run_result r = run("keel-attack", args);
    if (r.exit_code == 77) {
        char why[256];
        snprintf(why, sizeof why, "%s", r.err);
        keel_test_run_free(&r);
        keel_test_proc_kill(&bot, SIGINT);
        keel_test_proc_cleanup(&bot);
        keel_test_proc_cleanup(&s.proc);
        cr_skip("no raw socket here (run as root or with CAP_NET_RAW): %s", why);
    }
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_log_info("keel-attack forge: %s", r.out);
    double to_server =
        keel_test_json_num(r.out, "unsequenced_sent") + keel_test_json_num(r.out, "bandwidth_limit_sent");
    double to_client = keel_test_json_num(r.out, "disconnect_sent");
    char *bot_out = bot_finish(&bot, "the player", false);
    const char *b = strstr(bot_out, "{\"character\":");
    cr_assert_not_null(b, "%s", bot_out);
    char end[32];
    str_field(b, "end", end, sizeof end);
    double snapshots = keel_test_json_num(b, "snapshots"), bot_forged = keel_test_json_num(b, "frames_forged");
    keel_test_proc_kill(&s.proc, SIGTERM);
    char *out = keel_test_read_file(s.proc.out), *err = keel_test_read_file(s.proc.err);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    double commands = keel_test_json_num(sum, "commands"), substituted = keel_test_json_num(sum, "substituted");
    double forged = keel_test_json_num(sum, "frames_forged");
    cr_log_info("forged to the server %.0f (counted %.0f), to the player %.0f (counted %.0f); the player: end %s, "
                "snapshots %.0f of 640; the server: commands %.0f, substituted %.0f",
                to_server, forged, to_client, bot_forged, end, snapshots, commands, substituted);
    cr_expect_geq(forged * 10, to_server * 9, "forgeries to the server counted");
    cr_expect_geq(bot_forged, 1, "forged disconnects counted by the player");
    cr_expect_str_eq(end, "left", "the player played to the end");
    cr_expect_geq(snapshots, 512, "snapshots to the player (640 sent at one per 2 ticks)");
    cr_expect_leq(substituted * 10, commands, "the player's commands were replaced on the server");
    free(bot_out);
    free(out);
    free(err);
    keel_test_run_free(&r);
    keel_test_proc_cleanup(&s.proc);
}

// keel-attack race: the player completes its handshake, plain CONNECTs are
// forged from its address and port (one bare, one with a made-up trailer)
// before its own authenticated CONNECT: the forged ones bind nothing
// (counted as forged datagrams) and the server answers the player's CONNECT
// with an authenticated VERIFY_CONNECT for the player's connect id.
Test(attack, a_connect_spoofed_before_the_players_own_binds_nothing)
{
    server s;
    server_start(&s);
    const char *args[] = {"race", "--server", s.addr, "--token", issue("race", 501, s.addr, 0), "--wait", "1000", NULL};
    keel_test_run_result r = run("keel-attack", args);
    if (r.exit_code == 77) {
        char why[256];
        snprintf(why, sizeof why, "%s", r.err);
        keel_test_run_free(&r);
        keel_test_proc_cleanup(&s.proc);
        cr_skip("no raw socket here (run as root or with CAP_NET_RAW): %s", why);
    }
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_log_info("keel-attack race: %s", r.out);
    char result[64];
    cr_expect_str_eq(str_field(r.out, "result", result, sizeof result), "verified", "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "spoofed_connects"), 2);
    cr_expect_geq(keel_test_json_num(r.out, "own_connect_id_answers"), 1, "%s", r.out);
    cr_expect_eq(keel_test_json_num(r.out, "answers"), keel_test_json_num(r.out, "own_connect_id_answers"),
                 "every answer to the player's address is for its own connect id: %s", r.out);
    keel_test_proc_kill(&s.proc, SIGTERM);
    char *out = keel_test_read_file(s.proc.out), *err = keel_test_read_file(s.proc.err);
    const char *sum = strstr(out, "{\"summary\":1");
    cr_assert_not_null(sum, "no summary: %s %s", out, err);
    cr_expect_geq(keel_test_json_num(sum, "frames_forged"), 2, "the forged CONNECTs counted: %s", sum);
    free(out);
    free(err);
    keel_test_run_free(&r);
    keel_test_proc_cleanup(&s.proc);
}

Test(attack, bad_usage_is_exit_2_and_a_missing_raw_right_is_77_not_1)
{
    const char *none[] = {NULL};
    const char *unknown[] = {"nuke", NULL};
    const char *far[] = {"flood", "--server", "192.0.2.1:5000", "--rate", "10", "--seconds", "1", NULL};
    const char *fast[] = {"flood", "--server", "127.0.0.1:5000", "--rate", "200001", "--seconds", "1", NULL};
    const char *lng[] = {"flood", "--server", "127.0.0.1:5000", "--rate", "10", "--seconds", "61", NULL};
    const char *missing[] = {"request", "--server", "127.0.0.1:5000", NULL};
    const char *foreign[] = {"replay", "--server", "127.0.0.1:5000", "--in", "x", "--rate", "5", NULL};
    const char *damage[] = {"request", "--server", "127.0.0.1:5000", "--token", "t", "--damage", "1032", NULL};
    const char *no_victim[] = {"forge", "--server", "127.0.0.1:5000", NULL};
    const char *far_source[] = {"flood",     "--server", "127.0.0.1:5000", "--rate",   "10",
                                "--seconds", "1",        "--source",       "10.0.0.1", NULL};
    const char *const *cases[] = {none, unknown, far, fast, lng, missing, foreign, damage, no_victim, far_source};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        keel_test_run_result r = run("keel-attack", cases[i]);
        cr_expect_eq(r.exit_code, 2, "case %zu: %s", i, r.err);
        cr_expect_not_null(strstr(r.err, "--help lists the options"), "case %zu: %s", i, r.err);
        keel_test_run_free(&r);
    }
    const char *help[] = {"--help", NULL};
    keel_test_run_result r = run("keel-attack", help);
    cr_expect_eq(r.exit_code, 0);
    cr_expect_not_null(strstr(r.out, "keel-attack flood"));
    keel_test_run_free(&r);
    const char *no_file[] = {"request", "--server", "127.0.0.1:5000", "--token", keel_test_dir_file(dir, "none"), NULL};
    r = run("keel-attack", no_file);
    cr_expect_eq(r.exit_code, 1, "%s", r.err);
    keel_test_run_free(&r);
}
