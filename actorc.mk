# actorc.mk — GNU make (>= 4.3) rules for programs made of .actor files and
# C, on the installed actorc (docs/BUILD.md "Make"). A Makefile needs three
# lines:
#
#     ACTORC_SOURCES := bank.actor teller.actor
#     include $(shell pkg-config --variable=actorc_mk actorc)
#     app: main.o $(ACTORC_OBJS) ; $(ACTORC_LINK)
#
# Each NAME.actor gives $(ACTORC_OUT)/NAME.actor.h and .c in one run of
# actorc, with a depfile of the files it imports: editing an imported file
# regenerates its importers. Every object, yours and the generated ones, is
# compiled after every generated header exists (the first build knows no
# better) and with -MMD (later builds know exactly): editing an .actor file
# recompiles the C that includes its header.
#
# Variables, set before the include:
#   ACTORC_SOURCES     the .actor files
#   ACTORC_OUT         where the generated files go (default build/actorc)
#   ACTORC_FLAGS       extra actorc flags, e.g. -I idl (import path), -w
#   ACTORC_STATIC_LTO  1: link libactorc.a statically with gcc's link-time
#                      optimisation, -O2 unless CFLAGS has an -O (the fast
#                      build: the send path is inlined into your code)
#   ACTORC_PACKAGE     the pkg-config package (default actorc)
#   ACTORC             the compiler (default: the package's, else actorc)
# It defines ACTORC_OBJS, ACTORC_HEADERS, ACTORC_LINK (a link recipe) and
# ACTORC_LIBS, adds the include flags to CPPFLAGS and the libraries to
# LDLIBS (so make's built-in `prog: prog.o ...` links too), and replaces
# the built-in %.o: %.c rule by one that does the above.

ifndef ACTORC__INCLUDED
ACTORC__INCLUDED := 1

# The depfiles included below define targets; the user's first rule after
# the include must stay the default goal.
ACTORC__GOAL := $(.DEFAULT_GOAL)

ACTORC_OUT ?= build/actorc
ACTORC_FLAGS ?=
ACTORC_PACKAGE ?= actorc
ACTORC__PC := $(shell pkg-config --print-errors --exists $(ACTORC_PACKAGE) && echo yes)
ifneq ($(ACTORC__PC),yes)
$(error actorc.mk: pkg-config does not know $(ACTORC_PACKAGE): add the folder of its actorc.pc to PKG_CONFIG_PATH)
endif
ifndef ACTORC
ACTORC := $(shell pkg-config --variable=actorc $(ACTORC_PACKAGE))
endif

ACTORC_CPPFLAGS := -I$(ACTORC_OUT) $(shell pkg-config --cflags $(ACTORC_PACKAGE))
ifeq ($(ACTORC_STATIC_LTO),1)
ACTORC__LTO := -flto=auto $(if $(filter -O%,$(CFLAGS)),,-O2)
ACTORC_LIBS := $(shell pkg-config --variable=libdir $(ACTORC_PACKAGE))/libactorc.a \
    $(filter-out -lactorc,$(shell pkg-config --static --libs $(ACTORC_PACKAGE)))
CFLAGS += $(ACTORC__LTO)
CXXFLAGS += $(ACTORC__LTO)
LDFLAGS += $(ACTORC__LTO)
else
ACTORC_LIBS := $(shell pkg-config --libs $(ACTORC_PACKAGE))
endif
CPPFLAGS += $(ACTORC_CPPFLAGS)
LDLIBS += $(ACTORC_LIBS)

ACTORC__NAMES := $(notdir $(ACTORC_SOURCES:.actor=))
ACTORC_HEADERS := $(ACTORC__NAMES:%=$(ACTORC_OUT)/%.actor.h)
ACTORC_OBJS := $(ACTORC__NAMES:%=$(ACTORC_OUT)/%.actor.o)
ACTORC_LINK = $(LINK.o) $^ $(LOADLIBES) $(LDLIBS) -o $@

# One rule per source, naming its outputs: explicit targets, so make never
# deletes them as intermediates, and all in one folder, so that the
# #include "x.actor.h" an import becomes finds the header whatever folder
# the .actor file is in. The compiler is a prerequisite when it is a file:
# a new actorc regenerates everything.
define ACTORC__GENERATE
$(ACTORC_OUT)/$(notdir $(1:.actor=)).actor.c $(ACTORC_OUT)/$(notdir $(1:.actor=)).actor.h &: $(1) $(wildcard $(ACTORC))
	@mkdir -p $(ACTORC_OUT)
	$(ACTORC) $(ACTORC_FLAGS) -MD -MP -o $(ACTORC_OUT) $(1)
endef
$(foreach s,$(ACTORC_SOURCES),$(eval $(call ACTORC__GENERATE,$(s))))

# gcc's depfile for an object, kept in one folder whatever folder the
# object is in, so that this file can include them all.
ACTORC__DEPS := $(ACTORC_OUT)/.deps
ACTORC__DEPFLAGS = -MMD -MP -MF $(ACTORC__DEPS)/$(subst /,__,$@).d

%.o: %.c | $(ACTORC_HEADERS)
	@mkdir -p $(@D) $(ACTORC__DEPS)
	$(COMPILE.c) $(ACTORC__DEPFLAGS) $(OUTPUT_OPTION) $<
%.o: %.cc | $(ACTORC_HEADERS)
	@mkdir -p $(@D) $(ACTORC__DEPS)
	$(COMPILE.cc) $(ACTORC__DEPFLAGS) $(OUTPUT_OPTION) $<
%.o: %.cpp | $(ACTORC_HEADERS)
	@mkdir -p $(@D) $(ACTORC__DEPS)
	$(COMPILE.cpp) $(ACTORC__DEPFLAGS) $(OUTPUT_OPTION) $<

-include $(ACTORC__NAMES:%=$(ACTORC_OUT)/%.actor.d)
-include $(wildcard $(ACTORC__DEPS)/*.d)

.DEFAULT_GOAL := $(ACTORC__GOAL)
endif
