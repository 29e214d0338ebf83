package dev.gdasync.apps.common;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class MediansTest {
    @Test
    void theMiddleValueOrTheMeanOfTheTwoMiddleOnes() {
        double[] odd = {5, 1, 3};
        assertEquals(3, Medians.of(odd));
        assertArrayEquals(new double[]{5, 1, 3}, odd);
        assertEquals(2.5, Medians.of(new double[]{4, 1, 2, 3}));
        assertEquals(7, Medians.of(new double[]{7}));
    }
}
