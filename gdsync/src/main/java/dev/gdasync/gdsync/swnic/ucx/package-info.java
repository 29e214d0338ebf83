/**
 * The software NIC's UCX transport: peers on any host, through UCX's active messages on one UCP worker per NIC
 * (JUCX makes the worker and endpoints; the message path calls UCP through FFM, {@code UcpCalls}). Each send queue
 * entry becomes a request that the peer's NIC executes ({@code UcxTarget}) and answers; host memory only.
 *
 * <p>Layer: a transport, above {@code swnic.core}, which it may call, with {@code nic}, {@code memory},
 * {@code concurrent}, {@code ffm} and the process's UCX library ({@code gdsync.ucx}). Not exported.
 */
package dev.gdasync.gdsync.swnic.ucx;
