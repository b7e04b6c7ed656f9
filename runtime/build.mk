# The runtime: runtime/{core,services,lib}/*.c -> $(BUILD)/libactorc.a and
# $(BUILD)/libactorc.so; runtime/include/actorc.h is the public header.

AC_VERSION := $(shell sed -n 's/^\#define AC_VERSION_STRING "\(.*\)"/\1/p' runtime/include/actorc.h)
RUNTIME_SRC := $(wildcard runtime/core/*.c runtime/services/*.c runtime/lib/*.c)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(BUILD)/obj/%.o)

$(RUNTIME_OBJ): CPPFLAGS += $(SODIUM_CFLAGS) $(ZMQ_CFLAGS)
$(RUNTIME_OBJ): OBJ_LTO := $(LTO_CFLAGS)

# Made anew: `ar r` alone would keep the members of files since removed.
$(BUILD)/libactorc.a: $(RUNTIME_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libactorc.so: $(RUNTIME_OBJ)
	$(CC) -shared $(LDFLAGS) $(LTO_LDFLAGS) -Wl,-soname,libactorc.so.0 -o $@ $^ $(RUNTIME_LIBS)

# actorc-keygen: a node's keypair (tools/actorc-keygen.c, on the library).
$(BUILD)/actorc-keygen: $(BUILD)/obj/tools/actorc-keygen.o $(BUILD)/libactorc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(RUNTIME_LIBS)
