package dev.gdasync.test.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The layer rules inside libmp and apps (issue 34), checked on the compiled main classes: the library does not depend
 * on its tools (the launcher, the command-line layer and the collective proxy daemon) nor on picocli, the root ({@code Mp} and its request machinery) is below
 * the layers built on it, no class beside {@code Mp} in the root holds it or calls back into it, the built-in collectives are below the MSCCL runtime, and the applications' packages form
 * no cycle. See docs/architecture.md.
 */
class LibmpLayerRulesTest {
    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.gdasync.libmp", "dev.gdasync.apps");
    }

    private static final String[] TOOLS = {"dev.gdasync.libmp.launch..", "dev.gdasync.libmp.cli..",
            "dev.gdasync.libmp.proxy.."};

    @Test
    void theLibraryDoesNotDependOnItsTools() {
        noClasses().that().resideInAPackage("dev.gdasync.libmp..").and().resideOutsideOfPackages(TOOLS)
                .should().dependOnClassesThat().resideInAnyPackage(TOOLS)
                .check(main);
    }

    @Test
    void onlyTheToolsUsePicocli() {
        // libmp declares picocli optional and requires it statically: a program that uses the library runs without it.
        noClasses().that().resideInAPackage("dev.gdasync.libmp..").and().resideOutsideOfPackages(TOOLS)
                .should().dependOnClassesThat().resideInAnyPackage("picocli..")
                .check(main);
    }

    @Test
    void theRootIsBelowTheLayersBuiltOnIt() {
        noClasses().that().resideInAPackage("dev.gdasync.libmp")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.libmp.coll..", "dev.gdasync.libmp.comm..",
                        "dev.gdasync.libmp.shmem..", "dev.gdasync.libmp.ga..", "dev.gdasync.libmp.mpj..",
                        "dev.gdasync.libmp.launch..", "dev.gdasync.libmp.cli..", "dev.gdasync.libmp.proxy..")
                .check(main);
    }

    @Test
    void noClassBesideMpHoldsItOrCallsBackIntoIt() {
        // They hold the Mp's context (MpContext) instead: no arrow from the request machinery back up to the facade.
        noClasses().that().resideInAPackage("dev.gdasync.libmp").and().doNotHaveSimpleName("Mp")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.gdasync.libmp.Mp")
                .check(main);
    }

    @Test
    void theBuiltInCollectivesAreBelowTheMscclRuntime() {
        noClasses().that().resideInAnyPackage("dev.gdasync.libmp.coll", "dev.gdasync.libmp.coll.reduce",
                        "dev.gdasync.libmp.coll.shm")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.libmp.coll.msccl..")
                .check(main);
    }

    @Test
    void theApplicationsPackagesFormNoCycle() {
        slices().matching("dev.gdasync.apps.(*)..").should().beFreeOfCycles().check(main);
    }
}
