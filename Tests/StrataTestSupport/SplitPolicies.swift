import Strata

/// The posts split (`content` → a `Section` per post, linked back) as a dynamic closure policy, the form the declared
/// and typed splits are compared with: the post keeps its identity with its inferred values, a post without content
/// gets no section, a section's title is the first four characters of its body and "...", its index 7.
public enum SplitPolicies {
    public static let closureSplit = EntityMapping.transform("Post", destinations: ["Section"], instances: { post, ctx in
        try ctx.insert(try ctx.inferredObject(for: post))
        guard let content = post["content"].stringValue else { return }
        var section = try ctx.makeObject("Section")
        section["body"] = .string(content)
        section["title"] = .string(String(content.prefix(4)) + "...")
        section["index"] = .int64(7)
        let id = try ctx.insert(section, keepingSourceID: false)
        try ctx.link(post.id, of: "Post", "sections", to: id)
    })
}
