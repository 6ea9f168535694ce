/**
 * JDK Flight Recorder events of JCCL (category "JCCL"): communicator life cycle, each collective
 * (with its size and algorithm) and connection set-up. Off, they cost a field read per call and
 * allocate nothing; record with {@code -XX:StartFlightRecording} and read with
 * {@code jfr print --events io.jccl.Collective}.
 */
package io.jccl.core.observe;
