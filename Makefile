# actorc — top-level build.
#
#   make            install missing packages, build the compiler and the runtime
#   make demo       ... then generate, build and run examples/pingpong
#   make cluster-demo   ... examples/cluster: three nodes, one killed and restarted
#   make graphs     draw each example's actors (actorc --graph, dot -Tsvg) into
#                   build/examples/NAME/NAME.svg; make update-graphs rewrites
#                   the diagrams in examples/*/README.md after an IDL change
#   make test       ... then build and run every Criterion suite
#   make bench      ... then run the benchmarks in bench/
#   make SANITIZE=address,undefined test   the same in build/san-address-undefined
#   make SANITIZE=thread test              the same in build/san-thread
#   make CC=clang   any of the above with clang (in build/clang)
#   make install PREFIX=... [DESTDIR=...]   and make uninstall (tools/install.mk)
#
# Every generated file (re2c, lemon, actorc output) goes under $(BUILD).

.DEFAULT_GOAL := all
SHELL := /bin/bash

comma := ,
CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif

ifneq ($(SANITIZE),)
BUILD ?= build/san-$(subst $(comma),-,$(SANITIZE))
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT ?= -O1 -g
else ifneq ($(findstring clang,$(CC)),)
BUILD ?= build/clang
else
BUILD ?= build
endif
OPT ?= -O2 -g

# Link-time optimisation, for gcc release builds: the runtime's objects
# carry both machine code and gcc's intermediate form (-ffat-lto-objects),
# so a program linked without -flto gets the ordinary code and one linked
# with it (the benchmarks; any user who asks) inlines the send path across
# the runtime's files. bench/README.md gives the figures both ways.
ifeq ($(SANITIZE)$(findstring clang,$(CC)),)
LTO_CFLAGS := -flto=auto -ffat-lto-objects
LTO_LDFLAGS := $(OPT) -flto=auto
endif

CPPFLAGS += -D_GNU_SOURCE -Iruntime/include
BASE_CFLAGS := -std=c11 $(OPT) $(SANFLAGS) -pthread -MMD -MP -fPIC
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# lemon and re2c output: warnings stay visible but do not fail the build.
GEN_WARN := -Wall -Wno-unused-parameter -Wno-unused-variable -Wno-unused-but-set-variable
LDFLAGS += $(SANFLAGS) -pthread

SODIUM_CFLAGS := $(shell pkg-config --cflags libsodium 2>/dev/null)
SODIUM_LIBS := $(shell pkg-config --libs libsodium 2>/dev/null || echo -lsodium)
ZMQ_CFLAGS := $(shell pkg-config --cflags libzmq 2>/dev/null)
ZMQ_LIBS := $(shell pkg-config --libs libzmq 2>/dev/null || echo -lzmq)
# What a program linked with libactorc.a needs besides it.
RUNTIME_LIBS := $(SODIUM_LIBS) $(ZMQ_LIBS)
CRITERION_CFLAGS := $(shell pkg-config --cflags criterion 2>/dev/null)
CRITERION_LIBS := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)

# Compile our own C with the strict flags.
$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(WARN) $(OBJ_CFLAGS) $(CFLAGS) -c $< -o $@

# The rules for the .actor files of one folder, shared by the examples,
# the test suites and the benchmarks: $(1) the folder, $(2) where the
# generated files go, $(3) extra compile flags. One actorc run writes a
# file's .h and .c (a grouped target); a generated object waits for every
# generated header of the folder, since a file includes the headers of the
# files it imports. (actorc.mk is the same for users' Makefiles.)
define actorc_rules
$(2)/%.actor.c $(2)/%.actor.h &: $(1)/%.actor $(BUILD)/actorc
	@mkdir -p $$(@D)
	$(BUILD)/actorc -o $(2) $$<

$(2)/%.actor.o: $(2)/%.actor.c | $$(patsubst $(1)/%.actor,$(2)/%.actor.h,$$(wildcard $(1)/*.actor))
	$(CC) $(CPPFLAGS) -I$(2) $(BASE_CFLAGS) $(WARN) -Wpedantic $(3) $(CFLAGS) -c $$< -o $$@
endef

.PHONY: all deps demo cluster-demo test bench examples clean
all: $(BUILD)/actorc $(BUILD)/libactorc.a $(BUILD)/libactorc.so $(BUILD)/actorc-keygen

# Checks for the packages the build needs and installs them when it can.
deps:
	@tools/deps.sh

include compiler/build.mk
include runtime/build.mk
include examples/build.mk
include tests/build.mk
include bench/build.mk
include cmake/build.mk
include tools/install.mk
include docs/man/man.mk
-include bench/compile.mk tests/fuzz/fuzz.mk
-include bench/compare.mk

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
