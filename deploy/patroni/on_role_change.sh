#!/bin/sh
# Patroni's callback (on_start, on_role_change): ACTION ROLE SCOPE.  On the primary, the
# pgBackRest stanza is created if missing (idempotent), so archiving works from the start.
role=$2
case "$role" in
  master|primary) pgbackrest --stanza=quarterdeck stanza-create >/dev/null 2>&1 || true ;;
esac
exit 0
