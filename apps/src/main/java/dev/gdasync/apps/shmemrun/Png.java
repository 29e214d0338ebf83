package dev.gdasync.apps.shmemrun;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The shmem apps' plots: a white, antialiased, headless canvas, written as a PNG. */
public final class Png {
    static {
        // No display is needed (or wanted) to draw into an image.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private Png() {
    }

    /**
     * @param img the image to draw into
     * @return its graphics, cleared to white, antialiased; the caller disposes of it
     */
    public static Graphics2D canvas(BufferedImage img) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setColor(Color.BLACK);
        return g;
    }

    /**
     * @param width  pixels
     * @param height pixels
     * @return a new RGB image (headless)
     */
    public static BufferedImage image(int width, int height) {
        return new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    }

    /**
     * Writes an image as a PNG.
     *
     * @param img  the image
     * @param file the file (its folder must exist)
     * @throws UncheckedIOException if it cannot be written
     */
    public static void write(BufferedImage img, Path file) {
        try (OutputStream out = Files.newOutputStream(file)) {
            if (!ImageIO.write(img, "png", out)) {
                throw new IllegalStateException("this JDK has no PNG writer");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the plot " + file + ": " + e, e);
        }
    }
}
