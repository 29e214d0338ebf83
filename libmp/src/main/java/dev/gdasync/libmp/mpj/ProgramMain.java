package dev.gdasync.libmp.mpj;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * A program's main method, chosen as Java 25's {@code java} launcher chooses it (JEP 512): {@code main(String[])} if
 * the class has one, else {@code main()}; static or not (an instance method runs on an object made with the class's
 * no-argument constructor); public, protected or package-private, in a class that need not be public; declared by the
 * class or inherited from a superclass. So {@link MpjMain} runs every program {@code java MAIN_CLASS} runs.
 */
final class ProgramMain {
    private final Class<?> program;
    private final Method method;

    private ProgramMain(Class<?> program, Method method) {
        this.program = program;
        this.method = method;
    }

    /**
     * @param program the main class
     * @return its main method
     * @throws IllegalArgumentException naming what is missing: no main method the launcher would run, or an instance
     *                                  main in a class that cannot be made without arguments
     */
    static ProgramMain of(Class<?> program) {
        Method m = find(program, String[].class);
        if (m == null) {
            m = find(program);
        }
        if (m == null) {
            throw new IllegalArgumentException(program.getName() + " has no main method: a void main(String[]) or void"
                    + " main(), static or not, and not private");
        }
        if (!Modifier.isStatic(m.getModifiers())) {
            if (Modifier.isAbstract(program.getModifiers()) || program.isInterface()) {
                throw new IllegalArgumentException(program.getName() + "'s main is an instance method, and the class is "
                        + "abstract: no object to run it on");
            }
            Constructor<?> c = noArgConstructor(program);
            if (c == null) {
                throw new IllegalArgumentException(program.getName() + "'s main is an instance method, and the class has"
                        + " no constructor without arguments that is not private");
            }
        }
        m.setAccessible(true);
        return new ProgramMain(program, m);
    }

    private static Method find(Class<?> program, Class<?>... parameters) {
        for (Class<?> c = program; c != null; c = c.getSuperclass()) {
            try {
                Method m = c.getDeclaredMethod("main", parameters);
                if (!Modifier.isPrivate(m.getModifiers()) && m.getReturnType() == void.class) {
                    return m;
                }
            } catch (NoSuchMethodException e) {
                // not declared here: its superclass may declare it
            }
        }
        return null;
    }

    private static Constructor<?> noArgConstructor(Class<?> program) {
        try {
            Constructor<?> c = program.getDeclaredConstructor();
            return Modifier.isPrivate(c.getModifiers()) ? null : c;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** @return whether the method takes the program's arguments ({@code main(String[])}) */
    boolean takesArguments() {
        return method.getParameterCount() == 1;
    }

    /**
     * Runs the program.
     *
     * @param args its arguments (not passed to a {@code main()})
     * @throws Throwable whatever the program's main (or its constructor) throws
     */
    void run(String[] args) throws Throwable {
        try {
            Object target = null;
            if (!Modifier.isStatic(method.getModifiers())) {
                // On an object of the launched class, not of the superclass that may declare the method.
                Constructor<?> c = noArgConstructor(program);
                c.setAccessible(true);
                target = c.newInstance();
            }
            if (takesArguments()) {
                method.invoke(target, (Object) args);
            } else {
                method.invoke(target);
            }
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
