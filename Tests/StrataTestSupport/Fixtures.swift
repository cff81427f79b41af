import Foundation

/// Models and objects in the documented JSON forms (the schema JSON form, JSON Lines), shared by the
/// interchange tests of the library and the `strata` tool's tests.
public enum Fixtures {
    /// Blog v1: every attribute type, to-one and to-many relationships, a unique index, a minimum count.
    public static let v1 = model(version: "v1", postAttributes: """
        {"name":"title","type":"string"},
        {"name":"views","type":"int16","defaultValue":0}
        """)

    /// v2: `title` renamed to `headline`, `views` widened to int64 (every Post record rewritten),
    /// `flag` added with a default.
    public static let v2 = model(version: "v2", postAttributes: """
        {"name":"headline","type":"string","renamingIdentifier":"title"},
        {"name":"views","type":"int64","defaultValue":0},
        {"name":"flag","type":"bool","defaultValue":false}
        """)

    /// A v2 that cannot be inferred: a required attribute without a default, a type change.
    public static let v2Impossible = model(version: "v2", postAttributes: """
        {"name":"title","type":"int64"},
        {"name":"views","type":"int16","defaultValue":0},
        {"name":"summary","type":"string"}
        """)

    public static func model(version: String, postAttributes: String) -> String {
        """
        {"format":"strata.schema","formatVersion":1,"versionIdentifier":"\(version)","entities":[
         {"name":"Post","attributes":[
           {"name":"postID","type":"uuid","unique":true,"indexed":true},
           \(postAttributes),
           {"name":"body","type":"string","optional":true},
           {"name":"rating","type":"double","optional":true},
           {"name":"published","type":"date","optional":true},
           {"name":"cover","type":"data","optional":true},
           {"name":"link","type":"url","optional":true},
           {"name":"price","type":"decimal","optional":true},
           {"name":"meta","type":"codable","codableType":"Meta","optional":true}
          ],
          "relationships":[
           {"name":"tags","destination":"Tag","inverse":"posts","toMany":true},
           {"name":"author","destination":"Author","inverse":"posts"},
           {"name":"comments","destination":"Comment","inverse":"post","toMany":true,"deleteRule":"cascade"}
          ]},
         {"name":"Tag","attributes":[{"name":"name","type":"string","unique":true,"indexed":true}],
          "relationships":[{"name":"posts","destination":"Post","inverse":"tags","toMany":true}]},
         {"name":"Author","attributes":[
           {"name":"name","type":"string"},
           {"name":"age","type":"int32","optional":true},
           {"name":"karma","type":"int64","optional":true},
           {"name":"score","type":"float","optional":true},
           {"name":"active","type":"bool","defaultValue":true}
          ],
          "relationships":[
           {"name":"posts","destination":"Post","inverse":"author","toMany":true},
           {"name":"mentor","destination":"Author","inverse":"mentees"},
           {"name":"mentees","destination":"Author","inverse":"mentor","toMany":true}
          ]},
         {"name":"Comment","attributes":[{"name":"text","type":"string"}],
          "relationships":[{"name":"post","destination":"Post","inverse":"comments","minCount":1}]}
        ]}
        """
    }

    /// Objects of v1 with every kind of value; links point forwards and backwards, and are listed on one
    /// side only.
    public static let objects = """
        {"entity":"Comment","id":40,"attributes":{"text":"First! ✓"},"relationships":{"post":10}}
        {"entity":"Post","id":10,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","title":"Hello \\"world\\"\\n\\ttabbed","views":-32768,"body":"héllo ✓ \\u0001","rating":0.1,"published":726000000.5,"cover":"AAEC/w==","link":"https://example.com/a?b=c&d=é","price":"-12.5","meta":{"b":[1,2.5,null,true],"a":{"x":"y"}}},"relationships":{"tags":[20,21],"author":30}}
        {"entity":"Post","id":11,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E60","title":"","views":32767,"rating":"nan","published":"2024-01-02T03:04:05Z"}}
        {"entity":"Post","id":12,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E61","title":"third","rating":"-0","price":"NaN","meta":[1,"two"]},"relationships":{"tags":[21]}}
        {"entity":"Post","id":13,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E62","title":"fourth","rating":"-inf","published":-1e10,"meta":1.5}}
        {"entity":"Tag","id":20,"attributes":{"name":"swift"}}
        {"entity":"Tag","id":21,"attributes":{"name":"lmdb"}}
        {"entity":"Author","id":30,"attributes":{"name":"Ann","age":-2147483648,"karma":9223372036854775807,"score":0.1,"active":false},"relationships":{"mentees":[31]}}
        {"entity":"Author","id":31,"attributes":{"name":"Bob","karma":-9223372036854775808,"score":"inf"}}
        {"entity":"Comment","id":41,"attributes":{"text":"Second"},"relationships":{"post":11}}
        """ + "\n"

    /// Posts (and nothing else) for migrations that must take a while.
    public static func posts(_ count: Int, firstID: Int = 1000) -> String {
        var text = ""
        for i in 0..<count {
            let uuid = String(format: "00000000-0000-4000-8000-%012X", i + 1)
            text += "{\"entity\":\"Post\",\"id\":\(firstID + i),\"attributes\":{\"postID\":\"\(uuid)\",\"title\":\"post \(i)\",\"views\":\(i % 1000)}}\n"
        }
        return text
    }
}
