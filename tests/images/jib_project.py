"""A small Maven project built with Jib, as Bank of Anthos' Java services are, written into a test's
folder: one class, one JUnit 5 test, plugin versions pinned (those Spring Boot 3.3 manages)."""

from __future__ import annotations

from pathlib import Path

JRE = "eclipse-temurin:17-jre"  # what the pom builds FROM; app.yaml's images.from maps it

POM = f"""\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shop.example</groupId>
  <artifactId>email</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter-engine</artifactId>
      <version>5.10.3</version><scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.2</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.5.0</version></plugin>
      <plugin>
        <groupId>com.google.cloud.tools</groupId>
        <artifactId>jib-maven-plugin</artifactId>
        <version>3.4.3</version>
        <configuration>
          <from><image>{JRE}</image></from>
          <container><mainClass>shop.Greeting</mainClass></container>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
"""

MAIN = """\
package shop;

public class Greeting {
    static String greet(String name) {
        return "hello " + name;
    }

    public static void main(String[] args) {
        System.out.println(greet("from the image"));
    }
}
"""

TEST = """\
package shop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GreetingTest {
    @Test
    void greets() {
        assertEquals("hello you", Greeting.greet("you"));
    }
}
"""


def write_project(folder: Path) -> None:
    """The project in `folder`, in place of whatever service files were there."""
    for name in ("Dockerfile",):
        (folder / name).unlink(missing_ok=True)
    files = {"pom.xml": POM, "src/main/java/shop/Greeting.java": MAIN, "src/test/java/shop/GreetingTest.java": TEST}
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
