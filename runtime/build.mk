# The runtime: runtime/{core,services,node,lib}/*.c -> $(BUILD)/libactorc.a and
# $(BUILD)/libactorc.so; runtime/include/actorc.h is the public header.

AC_VERSION := $(shell sed -n 's/^\#define AC_VERSION_STRING "\(.*\)"/\1/p' runtime/include/actorc.h)
# The soname follows AC_ABI_VERSION: code generated for one ABI refuses to
# compile against another, and a program linked against one must not load
# another.
AC_ABI := $(shell sed -n 's/^\#define AC_ABI_VERSION \([0-9]*\)/\1/p' runtime/include/actorc.h)
AC_SONAME := libactorc.so.$(AC_ABI)
RUNTIME_SRC := $(wildcard runtime/core/*.c runtime/services/*.c runtime/node/*.c runtime/lib/*.c)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(BUILD)/obj/%.o)

$(RUNTIME_OBJ): CPPFLAGS += $(SODIUM_CFLAGS) $(ZMQ_CFLAGS)
# Only what actorc.h declares is exported (its visibility pragma).
$(RUNTIME_OBJ): OBJ_CFLAGS := $(LTO_CFLAGS) -fvisibility=hidden

# Made anew: `ar r` alone would keep the members of files since removed.
$(BUILD)/libactorc.a: $(RUNTIME_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/$(AC_SONAME): $(RUNTIME_OBJ)
	$(CC) -shared $(LDFLAGS) $(LTO_LDFLAGS) -Wl,-soname,$(AC_SONAME) -Wl,-z,defs -o $@ $^ $(RUNTIME_LIBS)
$(BUILD)/libactorc.so: $(BUILD)/$(AC_SONAME)
	ln -sfn $(AC_SONAME) $@

# actorc-keygen: a node's keypair (tools/actorc-keygen.c, on the library).
$(BUILD)/actorc-keygen: $(BUILD)/obj/tools/actorc-keygen.o $(BUILD)/libactorc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(RUNTIME_LIBS)
