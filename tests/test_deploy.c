// keel tests: Dockerfile and deploy/agones/*.yaml agree with each other and
// with keel-server (tests/deploy_facts.py does the reading: YAML through
// python3-yaml; skipped with a message without it). MIT licence, see LICENSE.
//
// What it checks: the manifests parse and name the kinds an Agones fleet
// needs; the Fleet's template is the GameServer's spec; the container is
// keel-server running the image's own command; the game port (UDP), the
// metrics port (TCP), the key's Secret and the recordings volume are the ones
// that command line uses and the Dockerfile exposes; the health period holds
// at least two of keel-server's pings (AGONES_HEALTH_PERIOD_MS); STOPSIGNAL
// SIGTERM and a non-root user. The image itself is not built here: that the
// command line runs is test_agones's part (against Agones' SDK server).
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "../server/keel-server/agones.h"

Test(deploy, the_manifests_and_the_dockerfile_agree_with_keel_server)
{
    if (system("python3 -c 'import yaml' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 with yaml (Debian python3-yaml) is not installed");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/deploy_facts.py' check '%s' %u 2>&1", KEEL_SOURCE_DIR, KEEL_SOURCE_DIR,
             AGONES_HEALTH_PERIOD_MS);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    static char out[16384];
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = 0;
    int st = pclose(p);
    cr_log_info("%s", out);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "deploy_facts.py check:\n%s", out);
}
