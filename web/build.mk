# keel: the browser verifier's module and page, for make with emcc.
# MIT licence, see LICENSE. scripts/build-web.sh runs it from the top of the
# tree (make -f web/build.mk -j2 OUT=build-web DEPS=build-cross/deps-wasm);
# objects carry their header dependencies (-MMD), so a second build
# recompiles only what changed.
OUT ?= build-web
DEPS ?= build-cross/deps-wasm
# The compiler for the objects: emcc, or (scripts/build-web.sh passes them)
# the clang that emcc runs with emcc's own flags (emcc --cflags): the same
# objects without emcc's start-up on every file.
WASM_CC ?= emcc
WASM_CFLAGS ?=

CFLAGS := -std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Werror \
	-fwrapv -DKEEL_CHECKS=1 -DKEEL_CROSS_BUILD=1 -I$(DEPS)/include \
	-Isim/include -Isim/src -Inet/include -Inet/src -Irec/include -Irec/src -Iclient/include -Iapp -Itests/games/tag -Igames/arena

# What keel-replay links (CMake: keel_sim, keel_net, keel_rec, keel_client
# and keel_app.c, keel_opt.c, keel_game.c with the example game and
# keel-arena linked in: --game tag, --game arena) less what needs ENet or
# libsodium: the ENet host, the connect tokens, the handshake and the sealing. net/src/absent/host_enet_absent.c
# answers for the ENet host.
NET_LEFT_OUT := $(wildcard net/src/host_enet*.c net/src/token*.c) net/src/handshake.c net/src/seal.c \
	net/src/frame.c
SOURCES := $(wildcard sim/src/*.c rec/src/*.c client/src/*.c tools/keel-replay/*.c) \
	$(filter-out $(NET_LEFT_OUT),$(wildcard net/src/*.c)) app/keel_app.c app/keel_opt.c app/keel_game.c tests/games/tag/tag.c \
	games/arena/arena.c games/arena/arena_level.c games/arena/arena_rules.c games/arena/arena_judge.c net/src/absent/host_enet_absent.c
OBJECTS := $(patsubst %.c,$(OUT)/obj/%.o,$(SOURCES))

# MODULARIZE: web/replay-call.js makes the module with KeelReplay({print,
# printErr}), in a Worker or on the page's thread (ENVIRONMENT web,worker).
# INVOKE_RUN=0: main() runs only through callMain, once per command; the
# runtime stays up between calls (EXIT_RUNTIME is off). SINGLE_FILE: the
# wasm is inlined into the script, so the page works from file:// too.
# No -pthread: the verifier runs its spans on the calling thread.
LDFLAGS := -O2 -sMODULARIZE=1 -sEXPORT_NAME=KeelReplay -sINVOKE_RUN=0 -sENVIRONMENT=web,worker \
	-sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1 "-sEXPORTED_RUNTIME_METHODS=['callMain','FS']"

PAGE := $(addprefix $(OUT)/,index.html verifier.js replay-call.js keel.css)

all: $(OUT)/keel-replay.js $(PAGE)

# This file is a prerequisite too: changed flags rebuild.
$(OUT)/keel-replay.js: $(OBJECTS) $(DEPS)/lib/libzstd.a $(DEPS)/lib/libxxhash.a web/build.mk
	emcc $(filter-out web/build.mk,$^) $(LDFLAGS) -o $@

$(OUT)/obj/%.o: %.c web/build.mk
	@mkdir -p $(@D)
	$(WASM_CC) $(WASM_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/%: web/%
	cp $< $@

-include $(OBJECTS:.o=.d)

.PHONY: all
