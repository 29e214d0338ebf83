package dev.gdasync.libmp.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * The rendezvous handshake: mutual authentication by HMAC-SHA256 challenge-response over the job's
 * secret, then the joining rank's identity.
 *
 * <pre>
 * member -> root : MAGIC, VERSION, member nonce (32 bytes)
 * root -> member : MAGIC, VERSION, root nonce (32), root proof = HMAC(secret, "gdasync-bootstrap-1 root" | member nonce | root nonce)
 * member -> root : rank, size, job id (UTF), member proof = HMAC(secret, "gdasync-bootstrap-1 member" | root nonce | member nonce | rank | size | job id)
 * root -> member : ACCEPT, or REJECT and a reason (duplicate rank, size or job id mismatch)
 * </pre>
 * Each side proves the secret over the other side's fresh nonce, and the two proofs carry different
 * labels, so neither can be replayed or reflected. A member sends nothing derived from the secret
 * before the root proved it, and the root closes a connection whose proof is wrong without a word.
 * The connection is authenticated, not encrypted: the bootstrap carries connection setup, never the
 * secret or application data.
 */
final class Handshake {
    static final int MAGIC = 0x47444253; // "GDBS"
    static final int VERSION = 1;
    static final int NONCE_BYTES = 32;
    static final byte ACCEPT = 0;
    static final byte REJECT = 1;
    private static final byte[] ROOT_LABEL = "gdasync-bootstrap-1 root".getBytes(StandardCharsets.UTF_8);
    private static final byte[] MEMBER_LABEL = "gdasync-bootstrap-1 member".getBytes(StandardCharsets.UTF_8);

    private Handshake() {
    }

    /** What a member said about itself, once its proof checked out. */
    record Joiner(int rank, int size, String jobId) {
    }

    /** The peer failed the handshake: it does not know the secret, or it does not speak this protocol. */
    static final class AuthenticationException extends IOException {
        private static final long serialVersionUID = 1L;

        AuthenticationException(String message) {
            super(message);
        }
    }

    /** The root refused this member for a reason that retrying will not fix. */
    static final class RejectedException extends IOException {
        private static final long serialVersionUID = 1L;

        RejectedException(String message) {
            super(message);
        }
    }

    /**
     * The member's side, up to and including the root's verdict.
     *
     * @throws AuthenticationException if the root did not prove the secret
     * @throws RejectedException       if the root refused this rank
     */
    static void join(DataInputStream in, DataOutputStream out, byte[] secret, int rank, int size, String jobId)
            throws IOException {
        byte[] mine = Secrets.nonce(NONCE_BYTES);
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.write(mine);
        out.flush();
        readPreamble(in, "the root");
        byte[] theirs = in.readNBytes(NONCE_BYTES);
        byte[] proof = in.readNBytes(32);
        if (theirs.length != NONCE_BYTES || proof.length != 32) {
            throw new AuthenticationException("the root closed the connection during the handshake");
        }
        if (!MessageDigest.isEqual(proof, Secrets.hmac(secret, ROOT_LABEL, mine, theirs))) {
            throw new AuthenticationException("the root did not prove the job's secret (a rank 0 of another job,"
                    + " or another service, listens there)");
        }
        out.writeInt(rank);
        out.writeInt(size);
        out.writeUTF(jobId);
        out.write(memberProof(secret, theirs, mine, rank, size, jobId));
        out.flush();
        byte verdict = in.readByte();
        if (verdict == REJECT) {
            throw new RejectedException(in.readUTF());
        }
        if (verdict != ACCEPT) {
            throw new AuthenticationException("the root answered " + verdict + " instead of a verdict");
        }
    }

    /**
     * The root's side, up to (not including) its verdict.
     *
     * @return who joined
     * @throws AuthenticationException if the member did not prove the secret or spoke another protocol
     */
    static Joiner admit(DataInputStream in, DataOutputStream out, byte[] secret) throws IOException {
        readPreamble(in, "the connecting process");
        byte[] theirs = in.readNBytes(NONCE_BYTES);
        if (theirs.length != NONCE_BYTES) {
            throw new AuthenticationException("the connecting process closed the connection during the handshake");
        }
        byte[] mine = Secrets.nonce(NONCE_BYTES);
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.write(mine);
        out.write(Secrets.hmac(secret, ROOT_LABEL, theirs, mine));
        out.flush();
        int rank = in.readInt();
        int size = in.readInt();
        String jobId = in.readUTF();
        byte[] proof = in.readNBytes(32);
        if (proof.length != 32 || !MessageDigest.isEqual(proof, memberProof(secret, mine, theirs, rank, size, jobId))) {
            throw new AuthenticationException("it did not prove the job's secret");
        }
        return new Joiner(rank, size, jobId);
    }

    /** Sends the root's verdict: accepted when {@code reason} is null. */
    static void verdict(DataOutputStream out, String reason) throws IOException {
        if (reason == null) {
            out.writeByte(ACCEPT);
        } else {
            out.writeByte(REJECT);
            out.writeUTF(reason.length() > 1000 ? reason.substring(0, 1000) : reason);
        }
        out.flush();
    }

    private static void readPreamble(DataInputStream in, String who) throws IOException {
        int magic = in.readInt();
        int version = in.readInt();
        if (magic != MAGIC) {
            throw new AuthenticationException(who + " does not speak the gdasync bootstrap protocol");
        }
        if (version != VERSION) {
            throw new AuthenticationException(who + " speaks bootstrap protocol version " + version + ", not " + VERSION);
        }
    }

    private static byte[] memberProof(byte[] secret, byte[] rootNonce, byte[] memberNonce, int rank, int size, String jobId) {
        byte[] ids = ByteBuffer.allocate(8).putInt(rank).putInt(size).array();
        return Secrets.hmac(secret, MEMBER_LABEL, rootNonce, memberNonce, ids, jobId.getBytes(StandardCharsets.UTF_8));
    }
}
