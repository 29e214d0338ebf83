package dev.gdasync.apps.hpgmg;

/** The timers upstream keeps per level (seconds), printed in its "Timing Breakdown". */
final class LevelTimers {
    double smooth;
    double applyOp;
    double residual;
    double blas1;
    double blas3;
    double boundaryConditions;
    double restrictionTotal;
    double restrictionLocal;
    double interpolationTotal;
    double interpolationLocal;
    double ghostZoneTotal;
    double ghostZoneLocal;
    double collectives;
    double total;

    void reset() {
        smooth = applyOp = residual = blas1 = blas3 = boundaryConditions = 0;
        restrictionTotal = restrictionLocal = interpolationTotal = interpolationLocal = 0;
        ghostZoneTotal = ghostZoneLocal = collectives = total = 0;
    }

    static double now() {
        return System.nanoTime() * 1e-9;
    }
}
