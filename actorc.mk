# actorc.mk — make rules for .actor files. A Makefile needs three lines:
#
#     ACTORC_SOURCES := bank.actor teller.actor
#     include actorc.mk
#     app: main.o $(ACTORC_OBJS)
#
# Each NAME.actor gives $(ACTORC_OUT)/NAME.actor.h and .c in one run of
# actorc (a grouped target), with a depfile listing the files it imports
# (-MD -MP), included below: editing an imported .actor file regenerates
# what imports it. Every generated object waits for every generated header
# (imports include each other's headers). Your own objects that include a
# generated header need the same: `main.o: | $(ACTORC_HEADERS)`, and
# $(ACTORC_CPPFLAGS) on their compile line (CPPFLAGS gets it by default).
#
# Variables (set before the include):
#   ACTORC_SOURCES  the .actor files (paths relative to this Makefile)
#   ACTORC          the compiler (default: actorc)
#   ACTORC_OUT      output folder (default: build/actorc)
#   ACTORC_FLAGS    extra flags, e.g. -I idl (import search path), -w
#   ACTORC_RUNTIME_CFLAGS  how to find actorc.h (default: pkg-config)

ACTORC ?= actorc
ACTORC_OUT ?= build/actorc
ACTORC_FLAGS ?=
ACTORC_RUNTIME_CFLAGS ?= $(shell pkg-config --cflags actorc 2>/dev/null)
ACTORC_CPPFLAGS = -I$(ACTORC_OUT) $(ACTORC_RUNTIME_CFLAGS)
CPPFLAGS += $(ACTORC_CPPFLAGS)

ACTORC_HEADERS := $(ACTORC_SOURCES:%.actor=$(ACTORC_OUT)/%.actor.h)
ACTORC_OBJS := $(ACTORC_SOURCES:%.actor=$(ACTORC_OUT)/%.actor.o)

# One run writes both files and the depfile (GNU make >= 4.3 for &:).
$(ACTORC_OUT)/%.actor.c $(ACTORC_OUT)/%.actor.h &: %.actor
	@mkdir -p $(@D)
	$(ACTORC) $(ACTORC_FLAGS) -MD -MP -o $(@D) $<

$(ACTORC_OUT)/%.actor.o: $(ACTORC_OUT)/%.actor.c | $(ACTORC_HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

-include $(ACTORC_SOURCES:%.actor=$(ACTORC_OUT)/%.actor.d)
