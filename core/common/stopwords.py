"""Function words of the languages questions are read in, left out of a question's key terms.

English's are in `core.common.text.STOPWORDS` and apply to every text; these apply only to a question
in their language, so that "die" or "war" stays a content word in English. Articles, pronouns,
prepositions, auxiliaries and the words questions are asked with: never a word a document's topic is
named by ("Lieferung", "prix").
"""

from __future__ import annotations

_WORDS = {
    "de": """
        der die das dem den des ein eine einer eines einem einen kein keine keinen keinem ich du er sie es
        wir ihr mein meine meinen meinem meiner dein deine ihre ihren ihrem unser unsere euer eure mir mich
        dir dich uns euch ihm ihn ihnen man sich ist sind war waren bin bist seid sein wird werden wurde
        habe hast hat haben hatte kann kannst können konnte muss musst müssen darf dürfen soll sollen sollte
        will wollen möchte möchten würde würden mag und oder aber auch noch schon nur sehr so wie was wann
        wo wer wen wem wessen warum wieso weshalb welche welcher welches welchen welchem wieviel wieviele
        wievielen viel viele mehr denn doch mal ja nein nicht nichts bitte danke hallo gibt gibts gilt es's
        für mit auf von zu zum zur im in am an ans aus bei bis nach über unter vor hinter zwischen durch
        gegen ohne um ab seit während wegen dass ob wenn falls dann da dort hier etwa eigentlich genau
        bekomme bekommt bekommen kriege kriegt muß daß eig
    """,
    "fr": """
        le la les l un une des du de d au aux ce cet cette ces je j tu il elle on nous vous ils elles me m
        te t se s moi toi lui leur leurs mon ma mes ton ta tes son sa ses notre nos votre vos est sont suis
        es êtes été être ai as a avons avez ont avoir fait faut peut peux peuvent puis pouvez dois doit
        doivent veux veut voudrais voulez et ou mais donc car ni ne n pas plus que qu qui quoi quel quelle
        quels quelles comment combien quand où pourquoi est-ce qu'est-ce c'est c y en dans sur sous pour
        par avec sans chez entre vers depuis pendant si oui non merci bonjour bien très aussi encore déjà
        svp stp ça cela ceci il-y-a y-a-t-il
    """,
    "es": """
        el la los las lo un una unos unas al del de yo tú tu él ella usted ustedes nosotros nosotras ellos
        ellas me te se nos os le les mi mis su sus nuestro nuestra vuestro vuestra es son soy eres somos
        está están estoy estás ser estar hay ha han he has hemos tengo tiene tienen tienes puedo puede
        pueden puedes debo debe quiero quiere necesito y o u pero ni no sí si que qué quien quién quienes
        cual cuál cuales cuáles como cómo cuando cuándo donde dónde cuanto cuánto cuanta cuánta cuantos
        cuántos cuantas cuántas por porque para con sin en entre sobre hasta desde hacia muy más también
        ya gracias hola favor este esta estos estas ese esa eso
    """,
    "it": """
        il lo la i gli le l un uno una un' di del dello della dei degli delle a al allo alla ai agli alle da
        dal in nel nella su sul sulla con per tra fra io tu lui lei noi voi loro mi ti ci vi si mio mia miei
        mie tuo tua suo sua nostro vostro è sono sei siamo siete ho hai ha abbiamo avete hanno posso puoi può
        possiamo potete possono devo deve voglio vorrei e o ma non che chi cosa come quando dove perché
        quale quali quanto quanta quanti quante anche già molto più ciao grazie
    """,
    "nl": """
        de het een ik jij je u hij zij ze wij we jullie mijn mij me uw jouw zijn haar ons onze hun is ben
        bent zijn was waren heb hebt heeft hebben kan kun kunt kunnen moet moeten mag mogen wil wilt willen
        zou zouden en of maar niet geen ook al nog wel hoe wat wanneer waar wie waarom welke welk hoeveel
        hoelang van voor met op in aan bij naar uit over om tot door er dit dat deze die dan als bedankt hallo
    """,
    "pt": """
        o a os as um uma uns umas de do da dos das em no na nos nas ao à aos às por pelo pela para com sem
        eu tu você vocês ele ela nós eles elas me te se nos lhe meu minha meus minhas seu sua seus suas é
        são sou está estão estou ser estar há tem têm tenho posso pode podem preciso quero e ou mas não sim
        que quê quem qual quais como quando onde quanto quanta quantos quantas porque também já muito mais
        obrigado obrigada olá
    """,
}
FUNCTION_WORDS = {language: frozenset(words.split()) for language, words in _WORDS.items()}
