#!/bin/sh
# DynamoDB Local's watchdog (local/dynamodb-local.ts starts it in its own process group, its stdin a pipe from the
# Node process that started it):
#   dynamodb-watchdog.sh <log file> <java command...>
# Runs the JVM and stops it with SIGTERM, so that it finishes the writes it has acknowledged and closes its files,
# when told to (SIGTERM/SIGINT/SIGHUP here) or when the parent is gone (exited, killed, its terminal closed): the
# pipe then reaches end of file. A signal to the stack's own process group never reaches the JVM directly. Idle, it
# costs no CPU (no polling).
log=$1
shift
exec 3<&0
"$@" >"$log" 2>&1 </dev/null &
jvm=$!
trap 'kill -TERM "$jvm" 2>/dev/null' TERM INT HUP
(
  cat >/dev/null
  kill -TERM "$jvm" 2>/dev/null
) <&3 &
# wait returns early when a trapped signal arrives: wait again until the JVM has exited.
while kill -0 "$jvm" 2>/dev/null; do
  wait "$jvm"
done
