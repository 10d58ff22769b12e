# install.cmake - what `make install` (cmake --install, with --prefix and DESTDIR) puts where:
#   PREFIX/bin/scorch, PREFIX/share/man/man1/scorch*.1 and man5/scorch.yaml.5,
#   PREFIX/lib/systemd/system/scorch.service, PREFIX/lib/sysusers.d/scorch.conf,
#   SYSCONF/scorch/scorch.yaml (the example config, never over one already there),
#   PREFIX/share/doc/scorch (README, CHANGELOG, LICENSE, docs/, the example config).
# SYSCONF is /etc for the prefix /usr and PREFIX/etc otherwise, as GNUInstallDirs has it; it
# is worked out when installing, so `cmake --install --prefix` needs no second configure.
include(GNUInstallDirs)

install(TARGETS scorch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The manual pages come from the built binary's --help (help2man) and docs/config.md.
find_program(HELP2MAN help2man)
if(HELP2MAN AND NOT SCORCH_SANITIZE)
  set(MAN_DIR ${CMAKE_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${MAN_DIR}/man5/scorch.yaml.5
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${MAN_DIR}
    COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/man.sh $<TARGET_FILE:scorch> ${MAN_DIR} ${PROJECT_VERSION}
    DEPENDS scorch ${CMAKE_SOURCE_DIR}/scripts/man.sh ${CMAKE_SOURCE_DIR}/scripts/md2man.awk
            ${CMAKE_SOURCE_DIR}/docs/config.md
    COMMENT "Manual pages from --help and docs/config.md")
  add_custom_target(man ALL DEPENDS ${MAN_DIR}/man5/scorch.yaml.5)
  install(DIRECTORY ${MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR})
elseif(NOT SCORCH_SANITIZE)
  message(STATUS "help2man not found: no manual pages (scripts/install-deps.sh build installs it)")
endif()

install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/CHANGELOG.md
              ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/packaging/scorch.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/scorch.sysusers DESTINATION lib/sysusers.d
        RENAME scorch.conf)

install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  if(prefix STREQUAL \"/usr\")
    set(SYSCONFDIR /etc)
  else()
    set(SYSCONFDIR \"\${prefix}/etc\")
  endif()
  set(BINDIR \"\${prefix}/${CMAKE_INSTALL_BINDIR}\")
  set(unit \"\$ENV{DESTDIR}\${prefix}/lib/systemd/system/scorch.service\")
  message(STATUS \"Installing: \${unit}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/packaging/scorch.service.in\" \"\${unit}\" @ONLY)
  # the admin's config stays as it is; the new example is in the doc directory
  set(conf \"\$ENV{DESTDIR}\${SYSCONFDIR}/scorch/scorch.yaml\")
  if(EXISTS \"\${conf}\")
    message(STATUS \"Kept: \${conf}\")
  else()
    file(INSTALL DESTINATION \"\${SYSCONFDIR}/scorch\" TYPE FILE
         FILES \"${CMAKE_SOURCE_DIR}/packaging/scorch.yaml\")
  endif()
")
