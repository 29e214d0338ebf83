package dev.gdasync.apps.comd;

/** Where a time step's time goes. */
enum Phase {
    /** The force computation (for EAM, both passes, without the dfEmbed exchange). */
    FORCE,
    /** Redistribution without its exchange: moving atoms between link cells, sorting the cells. */
    REDISTRIBUTE,
    /** The halo exchanges: packing, communication, unpacking (atoms, and dfEmbed for EAM). */
    EXCHANGE,
    /** Velocity and position updates. */
    INTEGRATE
}
