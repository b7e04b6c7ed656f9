# make install / make uninstall, with the GNU directory variables and
# DESTDIR staging (docs/BUILD.md "Installing"). Every installed file is one
# row of INSTALL_ROWS, "mode:source:destination", read by both targets, so
# uninstall removes exactly what install put there.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/actorc

# Made by `make install` for this PREFIX (a file in the build folder is
# stale the moment PREFIX changes, so they are made each time).
INSTALL_GEN := $(BUILD)/install

# A program linked through pkg-config finds the shared library where the
# dynamic linker looks anyway, or else through an rpath to LIBDIR: a user
# who installs into $HOME/.local must not need LD_LIBRARY_PATH.
SYSTEM_LIBDIRS := /usr/lib /lib /usr/lib64 /lib64 $(addprefix /usr/lib/,$(shell $(CC) -print-multiarch 2>/dev/null))
INSTALL_RPATH = $(if $(filter $(SYSTEM_LIBDIRS),$(LIBDIR)),,-Wl$(comma)-rpath$(comma)$${libdir})

INSTALL_ROWS = \
    755:$(BUILD)/actorc:$(BINDIR)/actorc \
    755:$(BUILD)/actorc-keygen:$(BINDIR)/actorc-keygen \
    644:$(BUILD)/libactorc.a:$(LIBDIR)/libactorc.a \
    755:$(BUILD)/$(AC_SONAME):$(LIBDIR)/$(AC_SONAME) \
    644:runtime/include/actorc.h:$(INCLUDEDIR)/actorc.h \
    644:actorc.mk:$(DATADIR)/actorc/actorc.mk \
    644:$(INSTALL_GEN)/actorc.pc:$(PKGCONFIGDIR)/actorc.pc \
    $(foreach f,$(CMAKE_PACKAGE_FILES),644:$(f):$(CMAKEDIR)/$(notdir $(f))) \
    $(foreach f,$(MAN1_PAGES),644:$(f):$(MANDIR)/man1/$(notdir $(f))) \
    $(foreach f,$(MAN3_PAGES),644:$(f):$(MANDIR)/man3/$(notdir $(f)))
# The development link, "points-to:link", next to the library: -lactorc
# finds it.
INSTALL_LINKS = $(AC_SONAME):$(LIBDIR)/libactorc.so

row_mode = $(word 1,$(subst :, ,$(1)))
row_src = $(word 2,$(subst :, ,$(1)))
row_dst = $(word 3,$(subst :, ,$(1)))
link_to = $(word 1,$(subst :, ,$(1)))
link_at = $(word 2,$(subst :, ,$(1)))

# $(call make_pc,prefix,bindir,libdir,includedir,actorc.mk,rpath) > file
make_pc = sed -e 's|@PREFIX@|$(1)|; s|@BINDIR@|$(2)|; s|@LIBDIR@|$(3)|; s|@INCLUDEDIR@|$(4)|' \
    -e 's|@ACTORC_MK@|$(5)|; s|@RPATH@|$(6)|; s|@VERSION@|$(AC_VERSION)|' runtime/actorc.pc.in

# The build folder as a package: with PKG_CONFIG_PATH=$(BUILD)/pkgconfig,
# pkg-config prefers actorc-uninstalled.pc to an installed actorc.pc, and
# a Makefile written for the installed actorc builds against this tree
# (examples/chat/Makefile is built that way by make test).
UNINSTALLED_PC := $(BUILD)/pkgconfig/actorc-uninstalled.pc
all: $(UNINSTALLED_PC)
$(UNINSTALLED_PC): runtime/actorc.pc.in runtime/include/actorc.h tools/install.mk
	@mkdir -p $(@D)
	$(call make_pc,$(CURDIR),$(CURDIR)/$(BUILD),$(CURDIR)/$(BUILD),$(CURDIR)/runtime/include,$(CURDIR)/actorc.mk,-Wl$(comma)-rpath$(comma)$${libdir}) > $@

# Phony: it names this install's folders (as cmake/build.mk's package does).
.PHONY: install uninstall $(INSTALL_GEN)/actorc.pc
$(INSTALL_GEN)/actorc.pc:
	@mkdir -p $(@D)
	$(call make_pc,$(PREFIX),$(BINDIR),$(LIBDIR),$(INCLUDEDIR),$(DATADIR)/actorc/actorc.mk,$(INSTALL_RPATH)) > $@

install: all $(INSTALL_GEN)/actorc.pc $(CMAKE_PACKAGE_FILES)
	@set -e; $(foreach r,$(INSTALL_ROWS),\
	    install -D -m $(call row_mode,$(r)) $(call row_src,$(r)) $(DESTDIR)$(call row_dst,$(r));)
	@set -e; $(foreach l,$(INSTALL_LINKS),\
	    ln -sfn $(call link_to,$(l)) $(DESTDIR)$(call link_at,$(l));)
	@echo "installed into $(DESTDIR)$(PREFIX)"

# Removes the files and then each folder install made that is empty now.
uninstall:
	rm -f $(foreach r,$(INSTALL_ROWS),$(DESTDIR)$(call row_dst,$(r))) \
	    $(foreach l,$(INSTALL_LINKS),$(DESTDIR)$(call link_at,$(l)))
	@for d in $(sort $(foreach r,$(INSTALL_ROWS),$(dir $(DESTDIR)$(call row_dst,$(r))))); do \
	    rmdir -p --ignore-fail-on-non-empty "$$d" 2>/dev/null || true; done
