package dev.gdasync.libmp.mpj;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MpjMain runs the main {@code java} would run (Java 25's launch rules), not only a public static one. */
class ProgramMainTest {
    private static final List<String> RAN = new ArrayList<>();

    static class PackagePrivateStatic {
        static void main(String[] args) {
            RAN.add("static " + String.join(",", args));
        }
    }

    static class Inherits extends PackagePrivateStatic {
    }

    static class Instance {
        private final String made = "made";

        void main(String[] args) {
            RAN.add(made + " " + getClass().getSimpleName() + " " + args.length);
        }
    }

    static class InstanceOfSubclass extends Instance {
    }

    static class NoArguments {
        static void main() {
            RAN.add("no arguments");
        }
    }

    static class Both {
        static void main() {
            RAN.add("main()");
        }

        static void main(String[] args) {
            RAN.add("main(String[])");
        }
    }

    static class Throws {
        static void main(String[] args) {
            throw new IllegalStateException("the program's own failure");
        }
    }

    static class PrivateMain {
        private static void main(String[] args) {
        }
    }

    static class ReturnsInt {
        static int main(String[] args) {
            return 0;
        }
    }

    static class NoMain {
    }

    static class InstanceWithoutNoArgConstructor {
        InstanceWithoutNoArgConstructor(int x) {
        }

        void main(String[] args) {
        }
    }

    abstract static class AbstractInstance {
        void main(String[] args) {
        }
    }

    @Test
    void theMainsJavaRunsAreRun() throws Throwable {
        RAN.clear();
        ProgramMain.of(PackagePrivateStatic.class).run(new String[] {"0", "a"});
        ProgramMain.of(Inherits.class).run(new String[] {"1"});
        ProgramMain.of(Instance.class).run(new String[] {"x", "y"});
        ProgramMain.of(InstanceOfSubclass.class).run(new String[0]);
        ProgramMain.of(NoArguments.class).run(new String[] {"ignored"});
        ProgramMain.of(Both.class).run(new String[0]);
        assertEquals(List.of("static 0,a", "static 1", "made Instance 2", "made InstanceOfSubclass 0", "no arguments",
                "main(String[])"), RAN);
        assertTrue(ProgramMain.of(Both.class).takesArguments());
        assertFalse(ProgramMain.of(NoArguments.class).takesArguments());
    }

    @Test
    void theProgramsOwnExceptionComesOutAsItIs() throws Exception {
        ProgramMain main = ProgramMain.of(Throws.class);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> main.run(new String[0]));
        assertEquals("the program's own failure", e.getMessage());
        assertSame(IllegalStateException.class, e.getClass());
    }

    @Test
    void aClassJavaWouldNotRunIsRefusedSayingWhy() {
        String none = " has no main method: a void main(String[]) or void main(), static or not, and not private";
        assertEquals(PrivateMain.class.getName() + none,
                assertThrows(IllegalArgumentException.class, () -> ProgramMain.of(PrivateMain.class)).getMessage());
        assertEquals(ReturnsInt.class.getName() + none,
                assertThrows(IllegalArgumentException.class, () -> ProgramMain.of(ReturnsInt.class)).getMessage());
        assertEquals(NoMain.class.getName() + none,
                assertThrows(IllegalArgumentException.class, () -> ProgramMain.of(NoMain.class)).getMessage());
        assertEquals(InstanceWithoutNoArgConstructor.class.getName() + "'s main is an instance method, and the class has"
                + " no constructor without arguments that is not private", assertThrows(IllegalArgumentException.class,
                () -> ProgramMain.of(InstanceWithoutNoArgConstructor.class)).getMessage());
        assertEquals(AbstractInstance.class.getName() + "'s main is an instance method, and the class is abstract: no"
                + " object to run it on", assertThrows(IllegalArgumentException.class,
                () -> ProgramMain.of(AbstractInstance.class)).getMessage());
    }
}
