package dev.gdasync.apps.comd;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Locale;

/** Number formatting as C's printf does it (CoMD's output is compared digit for digit). */
final class Text {
    private Text() {
    }

    /**
     * {@code %W.Pf}: the exact binary value rounded half-even to P decimals, as glibc prints it.
     *
     * @param x         the value
     * @param width     the minimum width (right-aligned)
     * @param decimals  digits after the point
     */
    static String fixed(double x, int width, int decimals) {
        String s;
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            s = Double.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
        } else {
            BigDecimal d = new BigDecimal(x).setScale(decimals, RoundingMode.HALF_EVEN);
            s = d.toPlainString();
            if (Double.doubleToRawLongBits(x) < 0 && d.signum() == 0) {
                s = "-" + s;
            }
        }
        return s.length() >= width ? s : " ".repeat(width - s.length()) + s;
    }

    /** {@code %g}: six significant digits, trailing zeros dropped. */
    static String g(double x) {
        if (x == 0) {
            return "0";
        }
        BigDecimal d = new BigDecimal(x).round(new MathContext(6, RoundingMode.HALF_EVEN));
        int exp = d.precision() - d.scale() - 1;
        if (exp < -4 || exp >= 6) {
            String m = d.unscaledValue().abs().toString();
            String mant = m.length() > 1 ? m.charAt(0) + "." + m.substring(1) : m;
            mant = mant.contains(".") ? mant.replaceAll("0+$", "").replaceAll("\\.$", "") : mant;
            return (d.signum() < 0 ? "-" : "") + mant + String.format(Locale.ROOT, "e%s%02d", exp < 0 ? "-" : "+", Math.abs(exp));
        }
        String s = d.toPlainString();
        if (s.contains(".")) {
            s = s.replaceAll("0+$", "").replaceAll("\\.$", "");
        }
        return s;
    }
}
