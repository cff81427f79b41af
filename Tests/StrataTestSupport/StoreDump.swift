import Foundation
import Strata

/// A store's whole content as text: every object of every entity in identifier order, with its attributes and the
/// identifiers it links to. Two stores with equal dumps hold the same objects under the same identifiers.
public enum StoreDump {
    public static func lines(_ store: Store) throws -> [String] {
        try store.read { ctx in
            var out: [String] = []
            for entity in ctx.schema.entities.sorted(by: { $0.name < $1.name }) {
                for object in try ctx.objects(entity.name).fetch().sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
                    var line = "\(entity.name)#\(object.id.rawValue)"
                    for a in entity.attributes { line += " \(a.name)=\(object[a.name])" }
                    for r in entity.relationships {
                        line += " \(r.name)->\(try ctx.relatedObjects(object, r.name).map(\.id.rawValue).sorted())"
                    }
                    out.append(line)
                }
            }
            return out
        }
    }
}
