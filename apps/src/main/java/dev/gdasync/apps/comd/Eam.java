package dev.gdasync.apps.comd;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The embedded-atom potential of CoMD read from a funcfl file (the Adams copper potential {@code Cu_u6.eam} ships with
 * the app): the embedding energy F(rho), the pair energy phi(r) from the effective charge Z(r), the electron density
 * rho(r). Immutable; {@link EamForce} holds a rank's per-atom storage.
 */
final class Eam implements Potential {
    /** The potential file shipped with the app, used when no directory is given. */
    static final String BUNDLED = "Cu_u6.eam";

    private final String name;
    private final int atomicNo;
    private final double mass;
    private final double lat;
    private final String latticeType;
    private final double cutoff;
    final EamTable f;
    final EamTable phi;
    final EamTable rho;

    private Eam(String name, int atomicNo, double mass, double lat, String latticeType, double cutoff, EamTable f,
                EamTable phi, EamTable rho) {
        this.name = name;
        this.atomicNo = atomicNo;
        this.mass = mass;
        this.lat = lat;
        this.latticeType = latticeType;
        this.cutoff = cutoff;
        this.f = f;
        this.phi = phi;
        this.rho = rho;
    }

    /**
     * Reads a funcfl file.
     *
     * @param dir  the folder, or null for the file shipped with the app (then {@code file} must be {@value #BUNDLED})
     * @param file the file's name
     * @return the potential
     * @throws IllegalArgumentException naming the file if it is missing or malformed
     */
    static Eam readFuncfl(Path dir, String file) {
        String where = dir == null ? file + " (shipped with the app)" : dir.resolve(file).toString();
        try (InputStream in = open(dir, file)) {
            return parse(new String(in.readAllBytes(), StandardCharsets.US_ASCII), where);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("cannot read the EAM potential file " + where + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the EAM potential file " + where + ": " + e.getMessage());
        }
    }

    private static InputStream open(Path dir, String file) throws IOException {
        if (dir == null) {
            InputStream in = Eam.class.getResourceAsStream(file);
            if (in == null) {
                throw new NoSuchFileException(file);
            }
            return in;
        }
        return Files.newInputStream(dir.resolve(file));
    }

    static Eam parse(String text, String where) {
        try (BufferedReader r = new BufferedReader(new java.io.StringReader(text))) {
            String line1 = r.readLine();
            String line2 = r.readLine();
            String line3 = r.readLine();
            if (line1 == null || line2 == null || line3 == null) {
                throw new IllegalArgumentException("the EAM potential file " + where + " ends before its three header lines");
            }
            String[] l1 = words(line1);
            String name = l1.length > 0 ? l1[0] : "";
            if (name.length() > 2) {
                name = name.substring(0, 2);
            }
            String[] l2 = words(line2);
            String[] l3 = words(line3);
            if (l2.length < 4 || l3.length < 5) {
                throw new IllegalArgumentException("the EAM potential file " + where + " is not in funcfl format (line 2: atomic"
                        + " number, mass, lattice constant, lattice type; line 3: nRho dRho nR dR cutoff)");
            }
            int atomicNo = Integer.parseInt(l2[0]);
            double mass = Double.parseDouble(l2[1]) * Units.AMU_TO_INTERNAL_MASS;
            double lat = Double.parseDouble(l2[2]);
            String latticeType = l2[3];
            int nRho = Integer.parseInt(l3[0]);
            double dRho = Double.parseDouble(l3[1]);
            int nR = Integer.parseInt(l3[2]);
            double dR = Double.parseDouble(l3[3]);
            double cutoff = Double.parseDouble(l3[4]);
            if (nRho < 3 || nR < 3) {
                throw new IllegalArgumentException("the EAM potential file " + where + " has tables of " + nRho + " and " + nR
                        + " points; funcfl needs at least 3 each");
            }
            List<Double> numbers = new ArrayList<>();
            for (String line; (line = r.readLine()) != null; ) {
                for (String w : words(line)) {
                    numbers.add(Double.parseDouble(w));
                }
            }
            if (numbers.size() < nRho + 2 * nR) {
                throw new IllegalArgumentException("the EAM potential file " + where + " holds " + numbers.size() + " table values,"
                        + " its header promises " + (nRho + 2 * nR));
            }
            double x0 = 0.0;
            double[] buf = new double[Math.max(nRho, nR)];
            int k = 0;
            for (int i = 0; i < nRho; i++) {
                buf[i] = numbers.get(k++);
            }
            EamTable f = new EamTable(nRho, x0, dRho, buf);
            for (int i = 0; i < nR; i++) {
                buf[i] = numbers.get(k++);
            }
            for (int i = 1; i < nR; i++) { // Z(r) to phi(r) = Z(r)^2 / r, in eV
                double rr = x0 + i * dR;
                buf[i] *= buf[i] / rr;
                buf[i] *= Units.HARTREE_TO_EV * Units.BOHR_TO_ANGS;
            }
            buf[0] = buf[1] + (buf[1] - buf[2]);
            EamTable phi = new EamTable(nR, x0, dR, buf);
            for (int i = 0; i < nR; i++) {
                buf[i] = numbers.get(k++);
            }
            EamTable rho = new EamTable(nR, x0, dR, buf);
            return new Eam(name, atomicNo, mass, lat, latticeType, cutoff, f, phi, rho);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the EAM potential file " + where + " is not in funcfl format: " + e.getMessage());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the EAM potential file " + where + ": " + e.getMessage());
        }
    }

    private static String[] words(String line) {
        String s = line.strip();
        return s.isEmpty() ? new String[0] : s.split("\\s+");
    }

    @Override
    public double cutoff() {
        return cutoff;
    }

    @Override
    public double mass() {
        return mass;
    }

    @Override
    public double lattice() {
        return lat;
    }

    @Override
    public String latticeType() {
        return latticeType;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int atomicNo() {
        return atomicNo;
    }

    @Override
    public void describe(PrintStream out) {
        out.println("  Potential type  : EAM");
        out.println("  Species name    : " + name);
        out.println("  Atomic number   : " + atomicNo);
        out.println("  Mass            : " + Text.g(mass / Units.AMU_TO_INTERNAL_MASS) + " amu");
        out.println("  Lattice type    : " + latticeType);
        out.println("  Lattice spacing : " + Text.g(lat) + " Angstroms");
        out.println("  Cutoff          : " + Text.g(cutoff) + " Angstroms");
    }
}
