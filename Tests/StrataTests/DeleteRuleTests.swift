import Foundation
import Strata
import StrataTestSupport
import Testing

/// Delete rules: nullify removes the deleted object from the other side, cascade deletes related objects
/// (following chains and cycles), deny refuses while links exist — and a refused delete leaves everything.
@Suite struct DeleteRuleTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Department") {
                Attribute("name", .string).unique()
                Relationship("employees", to: "Employee", inverse: "department", toMany: true)
            }
            Entity("Employee") {
                Attribute("name", .string).indexed()
                Relationship("department", to: "Department", inverse: "employees")
                Relationship("badges", to: "Badge", inverse: "owner", toMany: true, deleteRule: .cascade)
                Relationship("projects", to: "Project", inverse: "members", toMany: true)
                Relationship("mentor", to: "Employee", inverse: "mentees")
                Relationship("mentees", to: "Employee", inverse: "mentor", toMany: true)
            }
            Entity("Badge") {
                Attribute("code", .string)
                Relationship("owner", to: "Employee", inverse: "badges")
                Relationship("stamps", to: "Stamp", inverse: "badge", toMany: true, deleteRule: .cascade)
                Relationship("locker", to: "Locker", inverse: "badge", deleteRule: .deny)
            }
            Entity("Stamp") {
                Attribute("when", .date)
                Relationship("badge", to: "Badge", inverse: "stamps")
            }
            Entity("Locker") {
                Attribute("number", .int16)
                Relationship("badge", to: "Badge", inverse: "locker")
            }
            Entity("Project") {
                Attribute("title", .string)
                Relationship("members", to: "Employee", inverse: "projects", toMany: true, deleteRule: .deny)
            }
            // Two entities cascading into each other.
            Entity("Left") {
                Attribute("n", .int64)
                Relationship("right", to: "Right", inverse: "left", deleteRule: .cascade)
            }
            Entity("Right") {
                Attribute("n", .int64)
                Relationship("left", to: "Left", inverse: "right", deleteRule: .cascade)
            }
        }
    }

    final class Company {
        let store: Store
        let oracle: Oracle
        var departments: [ObjectID] = []
        var employees: [ObjectID] = []
        var badges: [ObjectID: [ObjectID]] = [:]
        var stamps: [ObjectID: [ObjectID]] = [:]

        /// Two departments, six employees, two badges each with three stamps each.
        init() throws {
            let schema = try DeleteRuleTests.schema()
            store = try Store.temporary(schema: schema)
            oracle = Oracle(schema: schema)
            let oracle = self.oracle
            var departments: [ObjectID] = [], employees: [ObjectID] = []
            var badges: [ObjectID: [ObjectID]] = [:], stamps: [ObjectID: [ObjectID]] = [:]
            try store.write { ctx in
                for d in 0..<2 {
                    let values: [String: Value] = ["name": .string("dep \(d)")]
                    let dep = try ctx.insert("Department", values)
                    oracle.insert("Department", id: dep.id, values)
                    departments.append(dep.id)
                }
                for e in 0..<6 {
                    let values: [String: Value] = ["name": .string("emp \(e)")]
                    let emp = try ctx.insert("Employee", values)
                    oracle.insert("Employee", id: emp.id, values)
                    employees.append(emp.id)
                    try ctx.link(emp.id, of: "Employee", "department", to: departments[e % 2])
                    oracle.link(emp.id, "department", departments[e % 2])
                    for b in 0..<2 {
                        let values: [String: Value] = ["code": .string("\(e)-\(b)")]
                        let badge = try ctx.insert("Badge", values)
                        oracle.insert("Badge", id: badge.id, values)
                        badges[emp.id, default: []].append(badge.id)
                        try ctx.link(emp, "badges", to: badge)
                        oracle.link(emp.id, "badges", badge.id)
                        for s in 0..<3 {
                            let values: [String: Value] = ["when": .date(Date(timeIntervalSinceReferenceDate: Double(s)))]
                            let stamp = try ctx.insert("Stamp", values)
                            oracle.insert("Stamp", id: stamp.id, values)
                            stamps[badge.id, default: []].append(stamp.id)
                            try ctx.link(stamp, "badge", to: badge)
                            oracle.link(stamp.id, "badge", badge.id)
                        }
                    }
                }
                // emp 0 mentors emp 1 and emp 2.
                for m in 1...2 {
                    try ctx.link(employees[m], of: "Employee", "mentor", to: employees[0])
                    oracle.link(employees[m], "mentor", employees[0])
                }
            }
            (self.departments, self.employees, self.badges, self.stamps) = (departments, employees, badges, stamps)
        }

        deinit { store.close() }

        func delete(_ id: ObjectID, _ entity: String) throws {
            try store.write { try $0.delete(id, of: entity) }
            oracle.delete(id)
        }

        func check(sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try oracle.mismatches(in: store) == [], sourceLocation: sourceLocation)
            #expect(try store.verify().problems == [], sourceLocation: sourceLocation)
        }
    }

    @Test func nullifyKeepsTheOtherSide() throws {
        let c = try Company()
        try c.delete(c.departments[0], "Department")
        for e in c.employees { #expect(try c.store.read { try $0.object(e, of: "Employee") } != nil) }
        #expect(try c.store.read { try $0.related(c.employees[0], of: "Employee", "department") } == [])
        // Deleting an employee removes it from its department and its mentor.
        try c.delete(c.employees[1], "Employee")
        #expect(try c.store.read { try $0.related(c.departments[1], of: "Department", "employees") } == [c.employees[3], c.employees[5]])
        #expect(try c.store.read { try $0.related(c.employees[0], of: "Employee", "mentees") } == [c.employees[2]])
        // Deleting the mentor leaves the mentee without one.
        try c.delete(c.employees[0], "Employee")
        #expect(try c.store.read { try $0.related(c.employees[2], of: "Employee", "mentor") } == [])
        try c.check()
        // The deleted employees are gone from the name index.
        #expect(try c.store.read { try $0.objects("Employee").where("name", equals: "emp 0").fetch() }.isEmpty)
    }

    @Test func cascadeFollowsChains() throws {
        let c = try Company()
        let victim = c.employees[4]
        let deleted = try c.store.write { ctx -> Int in
            let before = try ctx.count("Stamp") + ctx.count("Badge") + ctx.count("Employee")
            try ctx.delete(victim, of: "Employee")
            return before - (try ctx.count("Stamp") + ctx.count("Badge") + ctx.count("Employee"))
        }
        #expect(deleted == 1 + 2 + 6)
        let removed = c.oracle.delete(victim)
        #expect(removed.count == 9)
        for badge in c.badges[victim]! {
            #expect(try c.store.read { try $0.object(badge, of: "Badge") } == nil)
            for stamp in c.stamps[badge]! { #expect(try c.store.read { try $0.object(stamp, of: "Stamp") } == nil) }
        }
        #expect(try c.store.read { try $0.count("Stamp") } == 36 - 6)
        // Deleting a badge cascades to its stamps only, and nullifies the owner's side.
        let badge = c.badges[c.employees[0]]![0]
        try c.delete(badge, "Badge")
        #expect(try c.store.read { try $0.related(c.employees[0], of: "Employee", "badges") } == [c.badges[c.employees[0]]![1]])
        try c.check()
    }

    @Test func cascadeCyclesTerminate() throws {
        let c = try Company()
        let (l, r) = try c.store.write { ctx in
            let l = try ctx.insert("Left", ["n": 1]), r = try ctx.insert("Right", ["n": 2])
            try ctx.link(l, "right", to: r)
            return (l.id, r.id)
        }
        try c.store.write { try $0.delete(l, of: "Left") }
        #expect(try c.store.read { try $0.object(r, of: "Right") } == nil)
        #expect(try c.store.read { try $0.count("Left") + $0.count("Right") } == 0)
    }

    @Test func denyRefusesWhileLinked() throws {
        let c = try Company()
        let project = try c.store.write { ctx -> ObjectID in
            let p = try ctx.insert("Project", ["title": "apollo"])
            for e in c.employees[0..<3] { try ctx.link(p.id, of: "Project", "members", to: e) }
            return p.id
        }
        c.oracle.insert("Project", id: project, ["title": "apollo"])
        for e in c.employees[0..<3] { c.oracle.link(project, "members", e) }
        #expect(throws: StoreError.deleteDenied(entity: "Project", id: project, relationship: "members", count: 3)) {
            try c.store.write { try $0.delete(project, of: "Project") }
        }
        try c.check()
        // Deleting the members (nullify from their side) releases the project.
        try c.delete(c.employees[0], "Employee")
        try c.delete(c.employees[1], "Employee")
        #expect(throws: StoreError.deleteDenied(entity: "Project", id: project, relationship: "members", count: 1)) {
            try c.store.write { try $0.delete(project, of: "Project") }
        }
        try c.store.write { try $0.unlink(project, of: "Project", "members", from: c.employees[2]) }
        c.oracle.unlink(project, "members", c.employees[2])
        try c.delete(project, "Project")
        try c.check()
    }

    @Test func denyReachedThroughACascadeRefusesTheWholeDelete() throws {
        let c = try Company()
        let owner = c.employees[3]
        let badge = c.badges[owner]![1]
        let locker = try c.store.write { ctx -> ObjectID in
            let l = try ctx.insert("Locker", ["number": 12])
            try ctx.link(badge, of: "Badge", "locker", to: l.id)
            return l.id
        }
        c.oracle.insert("Locker", id: locker, ["number": 12])
        c.oracle.link(badge, "locker", locker)
        // Employee → badges (cascade) → badge with a locker (deny): nothing is deleted.
        #expect(throws: StoreError.deleteDenied(entity: "Badge", id: badge, relationship: "locker", count: 1)) {
            try c.store.write { try $0.delete(owner, of: "Employee") }
        }
        try c.check()
        #expect(try c.store.read { try $0.count("Stamp") } == 36)
    }

    @Test func deletingWhatDoesNotExistDoesNothing() throws {
        let c = try Company()
        try c.store.write { ctx in
            try ctx.delete(ObjectID(rawValue: 123_456), of: "Employee")
            // An existing object of another entity is not deleted through the wrong entity.
            try ctx.delete(c.departments[0], of: "Employee")
        }
        try c.check()
        // Deleting twice in one transaction.
        try c.store.write { ctx in
            try ctx.delete(c.employees[5], of: "Employee")
            try ctx.delete(c.employees[5], of: "Employee")
        }
        c.oracle.delete(c.employees[5])
        try c.check()
    }
}
