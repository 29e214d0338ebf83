package dev.gdasync.test.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.gdasync.gdsync.swnic.core.AccessChecker;
import dev.gdasync.gdsync.swnic.core.Connection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The layer rules of DESIGN.md §2 and {@code docs/architecture.md}, checked on the compiled main classes of every
 * module: dependencies point down only, libmp sees the NIC model and no provider, the software NIC's core knows no
 * transport, and every transport's executor asks the one access checker.
 */
class LayerRulesTest {
    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        // The test jars on this class path (gdsync's test support) hold test classes too.
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                .importPackages("dev.gdasync");
    }

    @Test
    void gdsyncCallsNothingAboveIt() {
        noClasses().that().resideInAPackage("dev.gdasync.gdsync..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.libmp..", "dev.gdasync.ki..",
                        "dev.gdasync.apps..")
                .check(main);
    }

    @Test
    void kiKernelsCallNeitherLibmpNorApplications() {
        noClasses().that().resideInAPackage("dev.gdasync.ki..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.libmp..", "dev.gdasync.apps..")
                .check(main);
    }

    @Test
    void libmpSeesTheNicModelAndNoProviderNorTheCudaLayer() {
        noClasses().that().resideInAPackage("dev.gdasync.libmp..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.gdsync.swnic..", "dev.gdasync.gdsync.cuda..",
                        "dev.gdasync.gdsync.ucx..", "dev.gdasync.apps..", "dev.gdasync.ki..")
                .check(main);
    }

    @Test
    void theNicModelKnowsNoProvider() {
        noClasses().that().resideInAPackage("dev.gdasync.gdsync.nic..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.gdsync.swnic..", "dev.gdasync.gdsync.cuda..",
                        "dev.gdasync.gdsync.stream..", "dev.gdasync.gdsync.descriptor..", "dev.gdasync.gdsync.ki..")
                .check(main);
    }

    @Test
    void theSoftwareNicCoreKnowsNoTransport() {
        noClasses().that().resideInAPackage("dev.gdasync.gdsync.swnic.core..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.gdsync.swnic", "dev.gdasync.gdsync.swnic.shm..",
                        "dev.gdasync.gdsync.swnic.ucx..", "dev.gdasync.gdsync.swnic.cudaipc..", "dev.gdasync.gdsync.cuda..",
                        "dev.gdasync.gdsync.ucx..")
                .check(main);
    }

    @Test
    void transportsKnowOnlyTheCoreAndWhatTheyCarry() {
        noClasses().that().resideInAPackage("dev.gdasync.gdsync.swnic.shm..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.gdsync.swnic", "dev.gdasync.gdsync.swnic.ucx..",
                        "dev.gdasync.gdsync.ucx..")
                .check(main);
        noClasses().that().resideInAPackage("dev.gdasync.gdsync.swnic.ucx..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.gdsync.swnic", "dev.gdasync.gdsync.swnic.shm..",
                        "dev.gdasync.gdsync.swnic.cudaipc..", "dev.gdasync.gdsync.cuda..")
                .check(main);
        noClasses().that().resideInAPackage("dev.gdasync.gdsync.swnic.cudaipc..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.gdsync.swnic", "dev.gdasync.gdsync.swnic.shm..",
                        "dev.gdasync.gdsync.swnic.ucx..")
                .check(main);
    }

    @Test
    void everyTransportsExecutorAsksTheOneAccessChecker() {
        classes().that().implement(Connection.class)
                .should().dependOnClassesThat().areAssignableTo(AccessChecker.class)
                .check(main);
    }

    @Test
    void gdsyncPackagesFormNoCycles() {
        slices().matching("dev.gdasync.gdsync.(*)..").should().beFreeOfCycles().check(main);
    }

    @Test
    void softwareNicPackagesFormNoCycles() {
        slices().matching("dev.gdasync.gdsync.swnic.(*)..").should().beFreeOfCycles().check(main);
    }

    @Test
    void kiKernelsRoomsFormNoCycles() {
        slices().matching("dev.gdasync.ki.(*)..").should().beFreeOfCycles().check(main);
        // The executor contract (the module's root package) sits below every executor and mirror, above the kernels.
        noClasses().that().resideInAPackage("dev.gdasync.ki")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gdasync.ki.exec..", "dev.gdasync.ki.cuda..",
                        "dev.gdasync.ki.shmem..", "dev.gdasync.ki.msccl..")
                .check(main);
        noClasses().that().resideInAPackage("dev.gdasync.ki.kernels..")
                .should().dependOnClassesThat().resideInAPackage("dev.gdasync.ki")
                .check(main);
    }
}
